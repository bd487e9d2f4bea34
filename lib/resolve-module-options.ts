import { MemoryStore } from '../adapters/memory/memory.store.js';
import { systemClock } from './clock.js';
import type { RateLimitModuleOptions } from './interfaces/rate-limit-module-options.interface.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';
import { Logger } from '@nestjs/common';
import { DEFAULT_IPV6_SUBNET } from './keys/ip-address.js';
import { compileRequestAddress } from './keys/request-address.js';
import { compileAddressList } from './keys/address-list.js';
import { resolveSkip } from './policies/skip.js';
import { describeValue, optionError } from './errors/option-error.js';
import { DeprecatedOptions } from './util/deprecated-options.js';
import { closestName, optionNames, rejectUnknownOptions } from './errors/unknown-options.js';
import { HEADER_MODES } from './headers/write-headers.js';
import { failModeProblem } from './limits/fail-mode.js';
import type { RateLimitStore } from './store/rate-limit-store.interface.js';
import { resolveHotKeysOptions } from './observability/hot-keys/hot-keys-options.js';
import { resolveMetricsOptions } from './observability/metrics/resolve-metrics-options.js';
import { newOwner } from './observability/rate-limit-channels.js';
import { resolveEventsOptions } from './observability/events/resolve-events-options.js';

/**
 * The names `forRoot()` and a `forRootAsync()` factory may use. `bindGlobally` (and the
 * deprecated `global`) never get here from `forRoot()` (Nest strips its extras); from a
 * factory they would be ignored, so they are refused with where they belong.
 */
const MODULE_OPTIONS = optionNames<RateLimitModuleOptions>({
  store: true,
  defaults: true,
  limits: true,
  headers: true,
  errorFormat: true,
  failMode: true,
  trustProxy: true,
  clock: true,
  ipv6Subnet: true,
  skip: true,
  allowList: true,
  shadow: true,
  metrics: true,
  events: true,
  hotKeys: true,
});

/**
 * Validate the module options once, at start-up; every message names the option.
 * (Limits themselves are validated with the routes they apply to.)
 */
export function resolveModuleOptions(options: RateLimitModuleOptions = {}): ResolvedModuleOptions {
  const fail = (option: string, problem: string): never => {
    throw optionError('RateLimitModule', option, problem);
  };
  if (options === null || typeof options !== 'object') fail('options', 'must be an object');
  for (const extra of ['bindGlobally', 'global']) {
    if (Object.hasOwn(options, extra)) {
      fail(
        extra,
        "belongs in forRootAsync()'s own options (next to useFactory or useClass), not in the options they return, where it would be ignored",
      );
    }
  }
  rejectUnknownOptions('RateLimitModule', options, MODULE_OPTIONS);
  const headers = options.headers ?? 'draft';
  if (!HEADER_MODES.includes(headers)) fail('headers', headersProblem(headers));
  const errorFormat = options.errorFormat ?? 'nest';
  if (errorFormat !== 'nest' && errorFormat !== 'problem+json') {
    fail('errorFormat', `must be 'nest' or 'problem+json', got ${describeValue(errorFormat)}`);
  }
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function')
    fail('clock', 'must be an object with a now() method returning milliseconds');
  const store: RateLimitStore = options.store ?? new MemoryStore();
  for (const method of ['consume', 'peek', 'refund', 'reset', 'close'] as const) {
    if (typeof (store as unknown as Record<string, unknown>)[method] !== 'function') {
      fail('store', `must implement RateLimitStore (missing ${method}())`);
    }
  }
  const failMode = options.failMode ?? 'open';
  const failModeError = failModeProblem(failMode, store.localFallback !== undefined);
  if (failModeError) fail('failMode', failModeError);
  if (options.limits !== undefined && !Array.isArray(options.limits))
    fail('limits', 'must be an array of limits');
  if (
    options.defaults !== undefined &&
    (options.defaults === null || typeof options.defaults !== 'object')
  ) {
    fail('defaults', 'must be a limit object');
  }
  const ipv6Subnet = options.ipv6Subnet ?? DEFAULT_IPV6_SUBNET;
  if (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128) {
    fail(
      'ipv6Subnet',
      `must be a prefix length, an integer from 1 to 128, got ${describeValue(ipv6Subnet)}`,
    );
  }
  const metrics = resolveMetricsOptions(options.metrics);
  const events = resolveEventsOptions(options.events);
  const warn = (message: string) => logger.warn(message);
  const deprecations = new DeprecatedOptions(warn);
  return {
    metrics,
    events,
    owner: newOwner(),
    hotKeys: resolveHotKeysOptions(options.hotKeys, (option, replacement) =>
      deprecations.note(option, replacement, 'RateLimitModule options'),
    ),
    store,
    headers,
    errorFormat,
    failMode,
    clock,
    address: compileRequestAddress({
      trustProxy: options.trustProxy,
      ipv6Subnet,
      onUntrustedForward: once(untrustedForwardWarning, warn),
    }),
    ipv6Subnet,
    trustsProxies:
      options.trustProxy !== undefined && options.trustProxy !== false && options.trustProxy !== 0,
    trustProxy: options.trustProxy,
    warn,
    deprecations,
    defaultKey: options.defaults?.key ?? 'ip',
    defaults: options.defaults,
    limits: options.limits ?? [],
    shadow:
      options.shadow === undefined
        ? false
        : options.shadow === true
          ? true
          : options.shadow === false
            ? false
            : fail('shadow', `must be a boolean, got ${describeValue(options.shadow)}`),
    skip: resolveSkip(options.skip, fail),
    allowed: compileAllowList(options, fail),
  };
}

/**
 * `allowList` as a test of the request: its client address resolved as the
 * `'ip'` key resolves it (same `trustProxy`), IPv6 unabridged (the `'ip'` key
 * groups it by `ipv6Subnet`; an allow list names hosts and networks).
 */
function compileAllowList(
  options: RateLimitModuleOptions,
  fail: (option: string, problem: string) => never,
): ResolvedModuleOptions['allowed'] {
  const entries = options.allowList;
  if (entries === undefined) return undefined;
  if (!Array.isArray(entries))
    fail('allowList', `must be a list of addresses and CIDRs, got ${describeValue(entries)}`);
  if (entries.length === 0) return undefined;
  const listed = compileAddressList(entries, 'allowList');
  // Said by the 'ip' key's resolver already: this one says nothing.
  const address = compileRequestAddress({
    trustProxy: options.trustProxy,
    ipv6Subnet: 128,
    onUntrustedForward: () => undefined,
  });
  return (request) => {
    const client = address(request);
    return client !== undefined && listed(client);
  };
}

const logger = new Logger('RateLimit');

/** The first call says it; later calls say nothing (per module, not per request). */
function once(
  message: (detail: string) => string,
  say: (message: string) => void,
): (detail: string) => void {
  let said = false;
  return (detail) => {
    if (said) return;
    said = true;
    say(message(detail));
  };
}

function untrustedForwardWarning(socketAddress: string): string {
  return (
    `RateLimitModule: a request from ${socketAddress} carried X-Forwarded-For, which is not trusted, so it was limited by ` +
    `${socketAddress} itself: behind a proxy, every client shares that proxy's bucket. If the application is behind a proxy, ` +
    "trust it: Express app.set('trust proxy', …), Fastify { trustProxy } (the proxies' addresses), or the module's trustProxy option " +
    "(a hop count or the proxies' addresses). If it is not, set trustProxy: false to say so. (Said once.)"
  );
}

function headersProblem(headers: unknown): string {
  const valid = HEADER_MODES.map((mode) => (mode === false ? 'false' : `'${mode}'`));
  // The numbered drafts first: a tie ('draft7') means the more specific name.
  const names = ['draft-7', 'draft-6', 'draft', 'legacy', 'both'];
  const closest = typeof headers === 'string' ? closestName(headers, names) : undefined;
  const hint = closest === undefined ? '' : ` (did you mean '${closest}'?)`;
  return `must be one of ${valid.join(', ')}, got ${describeValue(headers)}${hint}`;
}
