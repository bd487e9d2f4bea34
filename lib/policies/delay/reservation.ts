import type { RateLimitDecision } from '../../algorithms/rate-limit-decision.js';
import { TOKEN_EPSILON } from '../../algorithms/token-epsilon.js';
import type { StoreLimit, TokenBucketLimit } from '../../store/rate-limit-store.interface.js';

/**
 * Waiting for a token, as reservations in the bucket itself (`maxDelay`,
 * `RateLimiter.acquire`).
 *
 * A token bucket of rate r and burst b that may make a request wait up to
 * D ms is the same GCRA state charged against a bucket of burst
 * b + D·r/1000 (the *reserving* bucket): a request it admits reserves its
 * tokens at once (the state moves as for any admission, so later requests
 * queue behind it and the rate is never exceeded), and proceeds once its
 * tokens conform to the real burst, i.e. after
 *
 *     wait = resetMs − (b' · 1000 / r − D)      (resetMs: until the bucket is full again)
 *
 * No store needs to know: the check carries the reserving bucket, and every
 * store (memory, the Redis script, two-tier) decides it atomically, across
 * processes. Giving a reservation back is a refund of its cost.
 * Pure functions, no clock.
 */

/** The bucket a check charges when its request may wait up to `maxDelayMs`. */
export function reservingBucket<T extends StoreLimit>(
  bucket: T,
  maxDelayMs: number,
): T | TokenBucketLimit {
  // maxDelay is refused at start-up for windows (resolve-window.ts).
  if (maxDelayMs <= 0 || bucket.algorithm !== 'token-bucket') return bucket;
  return Object.freeze({
    algorithm: bucket.algorithm,
    rate: bucket.rate,
    burst: bucket.burst + (maxDelayMs * bucket.rate) / 1000,
  });
}

/** Milliseconds the real bucket (the reserving one without its delay) takes to fill. */
function realCapacityMs(reserving: TokenBucketLimit, maxDelayMs: number): number {
  return (reserving.burst * 1000) / reserving.rate - maxDelayMs;
}

/**
 * How long an admitted request waits before it may proceed (0: at once),
 * from its decision against the reserving bucket: exactly, not rounded. The
 * reserved schedule conforms to the real bucket; rounding each wait up on
 * its own would not (two neighbours rounded differently come closer than one
 * token's interval). Timers only ever fire late, never early.
 */
export function waitMs(
  decision: RateLimitDecision,
  reserving: TokenBucketLimit,
  maxDelayMs: number,
): number {
  if (!decision.allowed || maxDelayMs <= 0) return 0;
  const wait = decision.resetMs - realCapacityMs(reserving, maxDelayMs);
  // A fraction of a token's time is rounding, not a wait.
  return wait <= (TOKEN_EPSILON * 1000) / reserving.rate ? 0 : wait;
}

/**
 * The decision as the real bucket sees it, for the headers: whole tokens
 * left of the real burst (none while requests wait), the same reset time; a
 * denial keeps its retry time (when the request would be admitted, to wait).
 */
export function realDecision(
  decision: RateLimitDecision,
  reserving: TokenBucketLimit,
  maxDelayMs: number,
): RateLimitDecision {
  if (maxDelayMs <= 0) return decision;
  const left = (realCapacityMs(reserving, maxDelayMs) - decision.resetMs) / (1000 / reserving.rate);
  const remaining = left <= 0 ? 0 : Math.floor(left + TOKEN_EPSILON);
  return remaining === decision.remaining ? decision : { ...decision, remaining };
}
