import { describeValue } from '../errors/option-error.js';
import type {
  FailMode,
  KeyStrategy,
  RateLimitOptions,
} from '../interfaces/rate-limit-options.interface.js';
import { compileKeyStrategy, type Identify } from '../keys/key-strategy.js';
import { SHARED_ROUTE } from '../store/bucket-key.js';
import { failModeProblem } from './fail-mode.js';
import type { LimitContext, OptionFail } from './limit-context.js';

/** What every kind of limit (rate or concurrency) resolves alike. */
export interface CommonLimitOptions {
  /** The caller's identity for the limit's key. */
  readonly identify: Identify;
  /** The route part of its keys: the route's id, or {@link SHARED_ROUTE} with `scope: 'shared'`. */
  readonly route: string;
  readonly failMode: FailMode | undefined;
}

/** Refuse a name that cannot be part of a bucket key or a header member. */
export function checkLimitName(name: unknown, fail: OptionFail): void {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(name)) {
    fail('name', `must be 1-64 characters of [A-Za-z0-9_.:-], got ${describeValue(name)}`);
  }
}

/** `key`, `scope` and `failMode`, validated once for every kind of limit. */
export function resolveCommonOptions(
  options: Pick<RateLimitOptions, 'key' | 'scope' | 'failMode'>,
  name: string,
  context: LimitContext,
  fail: OptionFail,
): CommonLimitOptions {
  const identify = compileLimitKey(options.key, name, context, fail);
  const scope = options.scope ?? 'route';
  if (scope !== 'route' && scope !== 'shared')
    fail('scope', `must be 'route' or 'shared', got ${describeValue(scope)}`);
  const failModeError =
    options.failMode === undefined
      ? undefined
      : failModeProblem(options.failMode, context.localFallback);
  if (failModeError) fail('failMode', failModeError);
  return {
    identify,
    route: scope === 'shared' ? SHARED_ROUTE : context.routeId,
    failMode: options.failMode,
  };
}

/** A limit's key strategy (its own, else the module's default), compiled; refused through `fail`. */
export function compileLimitKey(
  key: KeyStrategy | undefined,
  name: string,
  context: LimitContext,
  fail: (option: string, problem: string) => never,
): Identify {
  const keyStrategy = key ?? context.defaultKey;
  let userFallbackReported = false;
  let keyErrorReported = false;
  const identify = compileKeyStrategy(keyStrategy, {
    address: context.address,
    ipv6Subnet: context.ipv6Subnet,
    where: `${context.where}, limit "${name}"`,
    onUserFallback: () => {
      if (userFallbackReported) return;
      userFallbackReported = true;
      context.warn(userFallbackWarning(`${context.where}, limit "${name}"`));
    },
    // Refused calls: said once per limit, not once per call.
    onKeyError: (message) => {
      if (keyErrorReported) return;
      keyErrorReported = true;
      context.warn(`${message}. Such calls are refused; said once.`);
    },
  });
  if (!identify) {
    return fail(
      'key',
      `must be 'ip', 'user', 'global', 'connection', 'header:<name>' or a function, got ${describeValue(keyStrategy)}`,
    );
  }
  return identify;
}

/**
 * Said once per route and limit: a `'user'` key that finds no `req.user` is
 * an anonymous request (fine) or an authentication that has not run yet
 * (every user then shares their address's bucket).
 */
function userFallbackWarning(where: string): string {
  return (
    `RateLimit: ${where}: key 'user' found no req.user (neither id nor sub), so the request was keyed by its client address. ` +
    'If this route is authenticated, authentication has not run before the limit: bind the auth guard with @UseGuards() on the ' +
    'controller or the route (limits keyed by user then run after it), or register it as a global guard before RateLimitModule. ' +
    'Anonymous requests are keyed by address on purpose; this is said once per route.'
  );
}
