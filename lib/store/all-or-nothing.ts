import { algorithmOf, type BucketState } from '../algorithms/algorithm.js';
import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import type { BucketRef, ConsumeResult, RateLimitCheck } from './rate-limit-store.interface.js';

/**
 * Where an in-process store keeps its bucket states: a number per token
 * bucket (GCRA TAT), a small object per window.
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export interface BucketStates {
  /** `ref`: the check the key is read for (its `namespace` and `identity`, when a store indexes by them). */
  read(key: string, ref: BucketRef): BucketState | undefined;
  write(key: string, state: BucketState, ref: BucketRef): void;
}

/**
 * The all-or-nothing rule of the store contract, for stores that hold their
 * buckets in process: decide every check, charge all of them only when all
 * admit. Synchronous; `now` in the store's own frame, whose 0 is the
 * absolute time `origin` (0 when the store works in absolute time): window
 * algorithms align on absolute time.
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export function consumeAllOrNothing(
  states: BucketStates,
  checks: readonly RateLimitCheck[],
  now: number,
  origin = 0,
): ConsumeResult {
  const count = checks.length;
  const next: BucketState[] = new Array(count);
  const decisions: RateLimitDecision[] = new Array(count);
  let allowed = true;
  for (let i = 0; i < count; i++) {
    const check = checks[i]!;
    const outcome = algorithmOf(check.limit).consume(
      states.read(check.key, check),
      now,
      check.limit,
      check.cost,
      origin,
    );
    next[i] = outcome.state;
    decisions[i] = outcome.decision;
    allowed &&= outcome.decision.allowed;
  }
  if (!allowed)
    return { allowed, decisions: reportUncharged(states, checks, decisions, now, origin) };
  for (let i = 0; i < count; i++) {
    const check = checks[i]!;
    states.write(check.key, next[i]!, check);
  }
  return { allowed, decisions };
}

/**
 * A request denied as a whole charged nothing, so the checks that would have
 * admitted it report their bucket as it stands (a peek), not as it would
 * have been after the charge. Rewrites `decisions` in place and returns it.
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export function reportUncharged(
  states: Pick<BucketStates, 'read'>,
  checks: readonly RateLimitCheck[],
  decisions: RateLimitDecision[],
  now: number,
  origin = 0,
): RateLimitDecision[] {
  for (let i = 0; i < checks.length; i++) {
    if (!decisions[i]!.allowed) continue;
    const check = checks[i]!;
    decisions[i] = algorithmOf(check.limit).peek(
      states.read(check.key, check),
      now,
      check.limit,
      origin,
    );
  }
  return decisions;
}
