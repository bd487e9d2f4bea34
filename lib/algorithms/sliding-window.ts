/**
 * Sliding window, as Cloudflare's weighted two-window counter: counts are
 * kept per fixed window (epoch-aligned), and the number of requests in the
 * last `windowMs` is estimated as
 *
 *     estimate = previous x (1 - elapsed / windowMs) + current
 *
 * where `elapsed` is the time since the current window started: the previous
 * window's count is assumed spread evenly over it, and only the part still
 * inside the last `windowMs` counts. A request is admitted when
 * `estimate + cost <= quota`.
 *
 * Why an estimate and not a log of every request: two numbers per key, O(1)
 * per decision, one Redis string. The price is that the estimate is wrong
 * whenever the previous window's requests were not spread evenly: measured on
 * a random trace in docs/algorithms.md (`node scripts/window-error.mjs`).
 *
 * Pure: state, time (absolute ms) and limit in, state and decision out. The
 * Redis script (`adapters/redis/scripts/sliding-window.lua.ts`) implements
 * the same arithmetic, operation for operation, and runs the same scenario
 * table (test/utils/window-scenarios.ts).
 */
import type { SlidingWindowLimit } from '../store/rate-limit-store.interface.js';
import type { RateLimitDecision } from './rate-limit-decision.js';
import { WINDOW_EPSILON, wholeLeft, type WindowOutcome, type WindowState } from './window-state.js';

/**
 * Milliseconds from `elapsed` (into the current window) until
 * `previous x (1 - e / W) + current + cost <= quota`, following the weight
 * past the window's end (where `current` becomes the previous count). 0 when
 * it already holds; `Infinity` when it never will (cost above the quota).
 */
export function slidingWaitMs(
  previous: number,
  current: number,
  elapsed: number,
  windowMs: number,
  quota: number,
  cost: number,
): number {
  if (cost > quota + WINDOW_EPSILON) return Number.POSITIVE_INFINITY;
  if (previous * (1 - elapsed / windowMs) + current + cost <= quota + WINDOW_EPSILON) return 0;
  if (current + cost <= quota + WINDOW_EPSILON) {
    // Within this window: enough of the previous window's weight slides out.
    return Math.max(0, windowMs * (1 - (quota - current - cost) / previous) - elapsed);
  }
  // Not before the next window, where this window's count slides out in turn.
  const next = current > 0 ? windowMs * (1 - (quota - cost) / current) : 0;
  return windowMs - elapsed + Math.max(0, next);
}

/**
 * Charge `cost` at `now`. A stored window later than the current one (the
 * clock went back) is taken as current with no time elapsed in it, and
 * waits count the time until then: never negative elapsed time, never a wait
 * shorter than needed.
 *
 * Decision fields: `remaining` = whole requests the estimate leaves;
 * `retryAfterMs` = until this request's cost fits under the estimate;
 * `resetMs` = until the estimate is 0 (everything slid out);
 * `effectiveWindowMs` = for a caller who spends `remaining` now, until one
 * more request fits: draft -11's `t`.
 */
export function slidingWindowConsume(
  state: WindowState | undefined,
  now: number,
  limit: SlidingWindowLimit,
  cost: number,
): WindowOutcome {
  const { windowMs, quota } = limit;
  let start = Math.floor(now / windowMs) * windowMs;
  let previous = 0;
  let count = 0;
  if (state !== undefined) {
    if (state.start >= start) {
      start = state.start;
      previous = state.previous;
      count = state.count;
    } else if (state.start === start - windowMs) {
      previous = state.count;
    }
  }
  const at = Math.max(now, start);
  const lag = at - now;
  const elapsed = at - start;
  const estimate = previous * (1 - elapsed / windowMs) + count;
  const current: WindowState = {
    start,
    end: start + windowMs,
    count,
    previous,
    expires: start + 2 * windowMs,
  };
  const allowed = cost <= quota + WINDOW_EPSILON && estimate + cost <= quota + WINDOW_EPSILON;
  const counted = allowed ? count + cost : count;
  const used = allowed ? estimate + cost : estimate;
  const remaining = wholeLeft(quota, used);
  const decision: RateLimitDecision = {
    allowed,
    remaining,
    retryAfterMs: allowed
      ? 0
      : lag + slidingWaitMs(previous, count, elapsed, windowMs, quota, cost),
    resetMs: lag + slidingWaitMs(previous, counted, elapsed, windowMs, quota, quota),
    effectiveWindowMs:
      lag + slidingWaitMs(previous, counted + remaining, elapsed, windowMs, quota, 1),
  };
  if (allowed) return { state: { ...current, count: counted }, decision };
  return {
    state: current,
    decision: {
      ...decision,
      reason: cost > quota + WINDOW_EPSILON ? 'cost-exceeds-burst' : 'limit',
    },
  };
}

/** The window as it stands at `now`, without charging (the decision of a cost of 0). */
export function slidingWindowPeek(
  state: WindowState | undefined,
  now: number,
  limit: SlidingWindowLimit,
): RateLimitDecision {
  return slidingWindowConsume(state, now, limit, 0).decision;
}
