import { compileKeyStrategy, type Identify } from '../keys/key-strategy.js';
import type { RequestAddress } from '../interfaces/request-address.interface.js';
import type { KeyStrategy, Rate, RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { resolveAdaptiveOptions } from '../adaptive/resolve-adaptive-options.js';
import { DEFAULT_LIMIT_NAME } from '../rate-limit.constants.js';
import { bucketNamespace, SHARED_ROUTE } from '../store/bucket-key.js';
import { describeValue, optionError } from '../errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../errors/unknown-options.js';
import { failModeProblem } from './fail-mode.js';
import { resolveChargePolicy } from '../policies/charge-by-outcome.js';
import { resolveSkip } from '../policies/skip.js';
import { compileDynamicBucket, dynamicLimitProblem } from '../policies/dynamic-limit.js';
import { resolveMaxDelay } from '../policies/delay/max-delay.js';
import { resolveBlockDuration } from '../policies/penalty.js';
import { horizonProblem, MIN_RATE, resolveBucket } from './resolve-bucket.js';
import { MAX_HORIZON_MS } from '../store/horizon.js';
import type { ResolvedLimit } from './resolved-limit.js';
import { resolveAlgorithm, resolveWindow } from './resolve-window.js';
import { capacityOf, type StoreLimit } from '../store/rate-limit-store.interface.js';

/** What a limit needs from its surroundings to be resolved. */
export interface LimitContext {
  /** Names the place the limit was declared, for error messages (`OrdersController.search`). */
  readonly where: string;
  /** Route identity used in bucket keys when the limit is route-scoped. */
  readonly routeId: string;
  readonly defaultKey: KeyStrategy;
  /** The client address as the module sees it. */
  readonly address: RequestAddress;
  readonly ipv6Subnet: number;
  /** Where what must be said once (not per request) is said: the module's logger. */
  readonly warn: (message: string) => void;
  /** The store can decide locally when its backend fails (allows `failMode: 'local'`). */
  readonly localFallback: boolean;
  /** The module's `shadow`: a limit's default. */
  readonly shadow?: boolean;
  /** The store can block a bucket (allows `blockDuration`). */
  readonly storeBlocks?: boolean;
  /** The store has concurrency slots (allows `concurrency`). */
  readonly storeSlots?: boolean;
}

/** Every option of a limit (in `@RateLimit()`, the module's `limits` and `defaults`), rate or concurrency. */
export const LIMIT_OPTIONS = optionNames<RateLimitOptions>({
  name: true,
  rate: true,
  burst: true,
  cost: true,
  key: true,
  scope: true,
  failMode: true,
  adaptive: true,
  charge: true,
  isFailure: true,
  skip: true,
  shadow: true,
  blockDuration: true,
  maxDelay: true,
  concurrency: true,
  leaseTimeout: true,
  algorithm: true,
  calendar: true,
});

/**
 * Validate one declared limit and turn it into a {@link ResolvedLimit}.
 * Throws a TypeError naming the place, the limit and the option.
 */
export function resolveLimit(options: RateLimitOptions, context: LimitContext): ResolvedLimit {
  const name = options?.name ?? DEFAULT_LIMIT_NAME;
  const where = `RateLimit: ${context.where}, limit "${name}"`;
  const fail = (option: string, problem: string): never => {
    throw optionError(where, option, problem);
  };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    fail('limit', `must be an object, got ${describeValue(options)}`);
  }
  // Before the values: `{ rat: 5 }` is a misspelling, not a missing rate.
  rejectUnknownOptions(where, options, LIMIT_OPTIONS);
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(name)) {
    fail('name', `must be 1-64 characters of [A-Za-z0-9_.:-], got ${describeValue(name)}`);
  }

  if (options.leaseTimeout !== undefined) fail('leaseTimeout', 'only applies to a concurrency limit (one with concurrency: N)');
  const algorithm = resolveAlgorithm(options, fail);
  const window = algorithm === 'token-bucket' ? undefined : resolveWindow(options, algorithm, where, fail);
  const dynamic = window === undefined ? compileDynamicBucket(options.rate, options.burst, where) : undefined;
  if (dynamic !== undefined) {
    const problem = dynamicLimitProblem(options);
    if (problem) fail(problem[0], problem[1]);
  }
  // A dynamic limit's bucket is validated per call; its placeholder is never charged.
  // A window's rate and burst are its average rate and quota: what the headers read.
  const { rate, burst } =
    window !== undefined
      ? { rate: (window.quota * 1000) / window.windowMs, burst: window.quota }
      : dynamic === undefined
        ? resolveBucket(options as { rate: Rate; burst?: number }, fail)
        : { rate: 1, burst: 1 };
  const bucket: StoreLimit = window ?? Object.freeze({ algorithm: 'token-bucket', rate, burst });

  const cost = options.cost ?? 1;
  if (typeof cost === 'number') {
    if (!Number.isFinite(cost) || cost <= 0) fail('cost', `must be a positive number or a function, got ${describeValue(cost)}`);
    const capacity = capacityOf(bucket);
    const what = window === undefined ? 'burst' : 'the quota';
    if (dynamic === undefined && cost > capacity) fail('cost', `(${cost}) is larger than ${what} (${capacity}): every request would be denied`);
  } else if (typeof cost !== 'function') {
    fail('cost', `must be a positive number or a function, got ${describeValue(cost)}`);
  }

  const identify = compileLimitKey(options.key, name, context, fail);

  const scope = options.scope ?? 'route';
  if (scope !== 'route' && scope !== 'shared') fail('scope', `must be 'route' or 'shared', got ${describeValue(scope)}`);
  const failModeError = options.failMode === undefined ? undefined : failModeProblem(options.failMode, context.localFallback);
  if (failModeError) fail('failMode', failModeError);

  const adaptive = options.adaptive === undefined ? undefined : resolveAdaptiveOptions(options.adaptive, { rate, burst }, where);
  // The burst follows an adaptive rate down, at least 1 token: at `min`, the horizon is the larger of the two.
  if (adaptive !== undefined && horizonProblem(adaptive.min, 1) !== undefined) {
    fail('adaptive.min', `must be at least ${MIN_RATE} tokens per second (one token per ${MAX_HORIZON_MS} ms, about 3,169 years), got ${adaptive.min}`);
  }

  const charge = resolveChargePolicy(options.charge, options.isFailure, fail);
  const skip = resolveSkip(options.skip, fail);
  const shadow = options.shadow ?? context.shadow ?? false;
  if (typeof shadow !== 'boolean') fail('shadow', `must be a boolean, got ${describeValue(shadow)}`);
  // A shadow limit is decided after the request is admitted, and nothing else happens to it.
  if (shadow && adaptive !== undefined) fail('shadow', 'cannot be combined with adaptive: a shadow limit has no outcomes to adapt to');
  if (shadow && dynamic !== undefined) fail('shadow', 'cannot be combined with a rate or burst function');
  const blockMs = resolveBlockDuration(options.blockDuration, { rate, burst, dynamic: dynamic !== undefined, shadow, storeBlocks: context.storeBlocks !== false }, fail);
  const maxDelayMs = resolveMaxDelay(options.maxDelay, { rate, shadow, dynamic: dynamic !== undefined }, fail);
  if (shadow && charge !== undefined) fail('shadow', `cannot be combined with charge: '${charge.mode}' (its tokens would never be given back)`);

  return {
    name,
    rate,
    burst,
    bucket,
    cost,
    identify,
    namespace: bucketNamespace(algorithm, name, scope === 'shared' ? SHARED_ROUTE : context.routeId),
    failMode: options.failMode,
    adaptive,
    charge,
    skip,
    shadow,
    dynamic,
    blockMs,
    maxDelayMs,
  };
}

/** A limit's key strategy (its own, else the module's default), compiled; refused through `fail`. */
export function compileLimitKey(key: KeyStrategy | undefined, name: string, context: LimitContext, fail: (option: string, problem: string) => never): Identify {
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
    return fail('key', `must be 'ip', 'user', 'global', 'connection', 'header:<name>' or a function, got ${describeValue(keyStrategy)}`);
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
