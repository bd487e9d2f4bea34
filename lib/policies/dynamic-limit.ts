import type { ExecutionContext } from '@nestjs/common';
import type { BucketLimit } from '../algorithms/gcra.js';
import { describeValue } from '../errors/option-error.js';
import type { Rate } from '../interfaces/rate-limit-options.interface.js';
import { resolveBucket } from '../limits/resolve-bucket.js';
import type { MaybePromise, StoreLimit } from '../store/rate-limit-store.interface.js';
import type { HeaderLimit } from '../headers/rate-limit-headers.js';
import type { DynamicBucket, ResolvedLimit } from '../limits/resolved-limit.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import type { BurstLog } from '../observability/burst-log.js';
import type { LimitPolicy } from './limit-policy.js';
import type { RateLimitClock } from '../clock.js';
import { withDeadline } from '../util/with-deadline.js';

/**
 * A dynamic limit produced a value no bucket can have: that call is decided
 * like a store failure (the limit's `failMode`), and the log says it once per
 * burst. Never an admission of everything: the next call asks again.
 *
 * @publicApi
 */
export class RateLimitValueError extends Error {
  override readonly name = 'RateLimitValueError';
}

/**
 * Compile `rate` and `burst` when either is a function of the call;
 * `undefined` when both are values (validated at start-up instead). The
 * values produced are validated per call with the start-up rules; an invalid
 * one rejects (or throws) a {@link RateLimitValueError} naming the limit.
 */
export function compileDynamicBucket(
  rate: unknown,
  burst: unknown,
  where: string,
): DynamicBucket | undefined {
  if (typeof rate !== 'function' && typeof burst !== 'function') return undefined;
  const produce = (context: ExecutionContext, value: unknown): unknown =>
    typeof value === 'function' ? value(context) : value;
  const check = (producedRate: unknown, producedBurst: unknown): BucketLimit =>
    resolveBucket(
      { rate: producedRate as Rate, burst: producedBurst as number | undefined },
      (option, problem) => {
        throw new RateLimitValueError(
          `${where}: the ${option} function produced a bad value: ${option} ${problem}`,
        );
      },
    );
  return (context) => {
    const producedRate = produce(context, rate);
    const producedBurst = produce(context, burst);
    if (!isPromiseLike(producedRate) && !isPromiseLike(producedBurst))
      return check(producedRate, producedBurst);
    return Promise.all([producedRate, producedBurst]).then(([r, b]) => check(r, b));
  };
}

/** Start-up checks of a dynamic limit's static half (the function half is checked per call). */
export function dynamicLimitProblem(options: {
  rate?: unknown;
  burst?: unknown;
  adaptive?: unknown;
  shadow?: unknown;
}): [string, string] | undefined {
  if (options.adaptive !== undefined)
    return [
      'adaptive',
      'cannot be combined with a rate or burst function: the controller moves a declared rate',
    ];
  if (options.shadow === true)
    return ['shadow', 'cannot be combined with a rate or burst function'];
  if (typeof options.rate !== 'function' && options.rate === undefined)
    return ['rate', `must be a rate or a function of the call, got ${describeValue(options.rate)}`];
  return undefined;
}

/**
 * How long the guard waits for asynchronous rate and burst functions, in the
 * module clock's milliseconds: past it the call is decided like a failed
 * function (the limit's `failMode`), said once per burst. A plan lookup that
 * never answers (a database call without a timeout, a cache client queued
 * while disconnected) would otherwise hold the request, and its memory, for
 * as long as the client waits.
 */
export const DYNAMIC_LIMIT_TIMEOUT_MS = 2_000;

/** A route's limits as they stand for one call: for the headers, and for the store. */
export interface CallBuckets {
  readonly limits: readonly HeaderLimit[];
  readonly buckets: readonly StoreLimit[];
}

/**
 * The buckets of a call: `base` with the dynamic limits from `from` to `to`
 * replaced by what their functions answer for this call. Synchronous while
 * they are; throws (or rejects) what they throw, or a {@link RateLimitValueError}.
 */
export function callBuckets(
  context: ExecutionContext,
  limits: readonly ResolvedLimit[],
  from: number,
  to: number,
  base: CallBuckets,
): MaybePromise<CallBuckets> {
  const headerLimits = base.limits.slice();
  const buckets = base.buckets.slice();
  let pending: Promise<void>[] | undefined;
  const place = (i: number, bucket: BucketLimit) => {
    headerLimits[i] = { name: limits[i]!.name, rate: bucket.rate, burst: bucket.burst };
    buckets[i] = { algorithm: 'token-bucket', rate: bucket.rate, burst: bucket.burst };
  };
  for (let i = from; i < to; i++) {
    const dynamic = limits[i]!.dynamic;
    if (dynamic === undefined) continue;
    const bucket = dynamic(context);
    if (isPromiseLike(bucket)) (pending ??= []).push(bucket.then((resolved) => place(i, resolved)));
    else place(i, bucket);
  }
  const built = { limits: headerLimits, buckets };
  return pending === undefined ? built : Promise.all(pending).then(() => built);
}

/**
 * The buckets of a call whose functions answer asynchronously, within
 * {@link DYNAMIC_LIMIT_TIMEOUT_MS} of `clock`: past it, rejects with a
 * {@link RateLimitValueError} (the fail mode decides, like any failing function).
 */
export function awaitCallBuckets(
  buckets: Promise<CallBuckets>,
  clock: RateLimitClock,
): Promise<CallBuckets> {
  return withDeadline(
    buckets,
    clock,
    DYNAMIC_LIMIT_TIMEOUT_MS,
    () =>
      new RateLimitValueError(
        `a rate or burst function did not answer within ${DYNAMIC_LIMIT_TIMEOUT_MS} ms`,
      ),
  );
}

/**
 * `rate` and `burst` as functions of the call: acts before the store (the
 * call's buckets). The limit's own resolution left placeholders for them.
 */
export const dynamicLimitPolicy: LimitPolicy<'dynamic'> = {
  options: [],
  appliesTo: (limit) => limit.dynamic !== undefined,
  resolve: (options, draft, context, fail) => {
    if (draft.bucket.algorithm !== 'token-bucket') return { dynamic: undefined };
    const dynamic = compileDynamicBucket(
      options.rate,
      options.burst,
      `RateLimit: ${context.where}, limit "${draft.name}"`,
    );
    const problem = dynamic === undefined ? undefined : dynamicLimitProblem(options);
    if (problem) fail(problem[0], problem[1]);
    return { dynamic };
  },
};

/** A rate or burst function failed (threw, rejected, or gave a value no bucket can have): said once per burst per route. */
export function reportDynamicFailure(log: BurstLog, routeId: string, error: unknown): void {
  const why = error instanceof Error ? error.message : String(error);
  log.occurred(routeId, 60_000, () => ({
    first: `RateLimit: ${routeId}: a rate or burst function failed (${why}); such calls are decided by the fail mode. Later failures are counted and said when this burst ends.`,
    summary: (count) =>
      `RateLimit: ${routeId}: ${count} call(s) whose rate or burst function failed in the last burst.`,
  }));
}
