import { MemoryStore } from '../adapters/memory/memory.store.js';
import { systemClock, type RateLimitClock } from './clock.js';
import type { HeadersMode, RateLimitModuleOptions } from './interfaces/rate-limit-module-options.interface.js';
import type { FailMode, KeyStrategy, RateLimitOptions } from './interfaces/rate-limit-options.interface.js';
import { compileTrustProxy, type ClientAddressResolver } from './keys/client-address.js';
import { describeValue, optionError } from './errors/option-error.js';
import { optionNames, rejectUnknownOptions } from './errors/unknown-options.js';
import { failModeProblem } from './limits/fail-mode.js';
import type { RateLimitStore } from './store/rate-limit-store.interface.js';

/**
 * Module options after validation, with defaults filled in.
 *
 * @internal
 */
export interface ResolvedModuleOptions {
  readonly store: RateLimitStore;
  readonly headers: HeadersMode;
  readonly failMode: FailMode;
  readonly clock: RateLimitClock;
  readonly clientAddress: ClientAddressResolver;
  readonly defaultKey: KeyStrategy;
  readonly defaults: RateLimitOptions | undefined;
  readonly limits: readonly RateLimitOptions[];
}

const HEADER_MODES: readonly unknown[] = ['draft', 'legacy', 'both', false];

/**
 * The names `forRoot()` and a `forRootAsync()` factory may use. `ipv6Subnet`
 * is listed ahead of its interface entry. `global` never gets here from
 * `forRoot()` (Nest strips its extras); from a factory it would be ignored,
 * so it is refused with where it belongs.
 */
const MODULE_OPTIONS = optionNames<RateLimitModuleOptions & { readonly ipv6Subnet?: unknown }>({
  store: true,
  defaults: true,
  limits: true,
  headers: true,
  failMode: true,
  trustProxy: true,
  clock: true,
  ipv6Subnet: true,
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
  if (Object.hasOwn(options, 'global')) {
    fail('global', "belongs in forRootAsync()'s own options (next to useFactory or useClass), not in the options they return, where it would be ignored");
  }
  rejectUnknownOptions('RateLimitModule', options, MODULE_OPTIONS);
  const headers = options.headers ?? 'draft';
  if (!HEADER_MODES.includes(headers)) fail('headers', `must be 'draft', 'legacy', 'both' or false, got ${describeValue(headers)}`);
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function') fail('clock', 'must be an object with a now() method returning milliseconds');
  const store: RateLimitStore = options.store ?? new MemoryStore();
  for (const method of ['consume', 'peek', 'refund', 'reset', 'close'] as const) {
    if (typeof (store as unknown as Record<string, unknown>)[method] !== 'function') {
      fail('store', `must implement RateLimitStore (missing ${method}())`);
    }
  }
  const failMode = options.failMode ?? 'open';
  const failModeError = failModeProblem(failMode, store.localFallback !== undefined);
  if (failModeError) fail('failMode', failModeError);
  if (options.limits !== undefined && !Array.isArray(options.limits)) fail('limits', 'must be an array of limits');
  if (options.defaults !== undefined && (options.defaults === null || typeof options.defaults !== 'object')) {
    fail('defaults', 'must be a limit object');
  }
  return {
    store,
    headers,
    failMode,
    clock,
    clientAddress: compileTrustProxy(options.trustProxy ?? false),
    defaultKey: options.defaults?.key ?? 'ip',
    defaults: options.defaults,
    limits: options.limits ?? [],
  };
}
