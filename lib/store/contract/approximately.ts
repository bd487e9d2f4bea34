import type { RateLimitDecision } from '../../algorithms/rate-limit-decision.js';
import type { ConsumeResult } from '../rate-limit-store.interface.js';
import type { StoreContractExpect } from './framework.js';

/**
 * The expected result with its millisecond fields matched to within 1 µs
 * (`expect.closeTo`).
 *
 * Stores compute in a time frame of their own (MemoryStore relative to its
 * first `now`, the Redis script relative to `floor(now)`, with the integer base
 * stored beside each key) where doubles are finer than at
 * `Date.now()` magnitudes, so `resetMs` / `retryAfterMs` can differ from the
 * bare algorithm's in the last bits; `allowed`, `remaining` and `reason` must
 * match exactly.
 *
 * @internal
 */
export function approximatelyWith(
  expect: Pick<StoreContractExpect, 'closeTo'>,
  expected: ConsumeResult,
): ConsumeResult {
  const near = (ms: number): number =>
    Number.isFinite(ms) ? (expect.closeTo(ms, 3) as number) : ms;
  const approximate = (decision: RateLimitDecision): RateLimitDecision => {
    const close = {
      ...decision,
      retryAfterMs: near(decision.retryAfterMs),
      resetMs: near(decision.resetMs),
    };
    return decision.effectiveWindowMs === undefined
      ? close
      : { ...close, effectiveWindowMs: near(decision.effectiveWindowMs) };
  };
  return { ...expected, decisions: expected.decisions.map(approximate) };
}
