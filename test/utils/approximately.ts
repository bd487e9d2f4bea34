import type { ConsumeResult, RateLimitDecision } from 'nestjs-holdup';

/**
 * The expected result with its millisecond fields matched to within 1 µs.
 *
 * Stores compute in a time frame of their own (MemoryStore relative to its
 * first `now`, the Redis script relative to `floor(now)`, with the integer base
 * stored beside each key) where doubles are finer than at
 * `Date.now()` magnitudes, so `resetMs` / `retryAfterMs` can differ from the
 * bare algorithm's in the last bits; `allowed`, `remaining` and `reason` must
 * match exactly.
 */
export function approximately(expected: ConsumeResult): ConsumeResult {
  return { ...expected, decisions: expected.decisions.map(approximateDecision) };
}

function approximateDecision(decision: RateLimitDecision): RateLimitDecision {
  const approximate = { ...decision, retryAfterMs: near(decision.retryAfterMs), resetMs: near(decision.resetMs) };
  return decision.effectiveWindowMs === undefined ? approximate : { ...approximate, effectiveWindowMs: near(decision.effectiveWindowMs) };
}

function near(ms: number): number {
  return Number.isFinite(ms) ? (expect.closeTo(ms, 3) as unknown as number) : ms;
}
