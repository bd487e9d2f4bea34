import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import type { RateLimitEngine } from '../engine/rate-limit-engine.js';
import { describeValue } from '../errors/option-error.js';
import type { RateLimitCheck, TokenBucketLimit } from '../store/rate-limit-store.interface.js';
import { settlementOf } from '../policies/settle.js';

/**
 * What `RateLimiter.reserve()` answers: an estimate reserved (or refused)
 * in a bucket, to settle once the real cost is known.
 *
 * ```ts
 * const r = await limiter.reserve(`llm:${user.id}`, { name: 'tokens', rate: '100000/hour' }, { cost: 500 });
 * if (!r.allowed) throw new TooManyRequests(r.retryAfterMs);
 * const answer = await llm.complete(prompt);
 * await r.settle(answer.usage.totalTokens);   // refund, or debt the next reservations wait out
 * ```
 *
 * A reservation never settled stays charged at its estimate (what a crash
 * leaves, and what a clean exit leaves too: nothing is owed). Settling or
 * cancelling twice, or a denied reservation, is harmless: nothing happens.
 *
 * @publicApi
 */
export interface RateLimitReservation {
  /** The estimate was reserved: go ahead, then {@link settle}. */
  readonly allowed: boolean;
  /** When denied: milliseconds until the estimate would be admitted (a bucket in debt included); 0 when allowed. */
  readonly retryAfterMs: number;
  /** The estimate reserved (the `cost` asked). */
  readonly reserved: number;
  /** The bucket's decision at reservation, as `consume` answers it. */
  readonly decision: RateLimitDecision;
  /**
   * The real cost: the difference from the estimate goes to the bucket,
   * given back when lower (never fuller than full), charged when higher,
   * even past empty (the bucket's next callers wait until the debt is
   * repaid). Rejects with a `TypeError` for anything but a number >= 0
   * (nothing settled, try again), with a `RateLimitStoreError` when the store
   * fails (the estimate stays charged).
   */
  settle(actual: number): Promise<void>;
  /** Gives the whole reservation back (the work did not happen): {@link settle} at 0. */
  cancel(): Promise<void>;
}

/**
 * A reservation of `check` (its cost the estimate) that `decision` answered.
 * Its settlement goes through the engine (logged and resolved like any
 * store call), once.
 *
 * @internal
 */
export function createReservation(
  engine: RateLimitEngine,
  check: RateLimitCheck & { readonly limit: TokenBucketLimit },
  decision: RateLimitDecision,
): RateLimitReservation {
  let open = decision.allowed;
  const settle = async (actual: number, method: string): Promise<void> => {
    if (typeof actual !== 'number' || !Number.isFinite(actual) || actual < 0)
      throw new TypeError(
        `RateLimitReservation.${method}: the actual cost must be a number >= 0, got ${describeValue(actual)}`,
      );
    if (!open) return;
    open = false;
    const settlement = settlementOf(check, actual);
    if (settlement === undefined) return;
    const store = engine.store;
    await engine.run(() => store.settle!({ checks: [settlement], now: engine.now() }));
  };
  return {
    allowed: decision.allowed,
    retryAfterMs: decision.retryAfterMs,
    reserved: check.cost,
    decision,
    settle: (actual) => settle(actual, 'settle'),
    cancel: () => settle(0, 'cancel'),
  };
}
