import { emissionIntervalMs, gcraPeek, type RateLimitDecision } from '../../lib/algorithms/gcra.js';
import type { TokenBucketCheck } from '../../lib/store/rate-limit-store.interface.js';
import type { KeyState } from './key-state.js';

/**
 * Time until a request of `cost` may be asked of Redis again, when a
 * request of `deniedCost` was held until `denyUntil`: a dearer request
 * waits for its extra tokens too (`intervalMs` each).
 */
export function denyWaitMs(
  denyUntil: number,
  deniedCost: number,
  cost: number,
  intervalMs: number,
  now: number,
): number {
  return denyUntil - now + (cost - deniedCost) * intervalMs;
}

/**
 * Keys not to ask Redis about for a while, kept in their {@link KeyState}
 * (`denyUntil`, `denyCost`): a key Redis denied stays denied locally until
 * its retry time, and a hot key is also held after a lease that came back
 * short, until a whole lease is expected again (see `TwoTierStore`).
 *
 * A hold applies to requests as dear as the one held or dearer, for the same
 * limit: a cheaper request, or a limit that changed, is asked of Redis.
 *
 * @internal
 */
export class DenyCache {
  /** Requests denied by a cached denial, without asking Redis. */
  hits = 0;

  /** True while `check` is held: no Redis call for it before its wait is over. */
  active(check: TokenBucketCheck, state: KeyState, now: number): boolean {
    return (
      state.denyUntil > now &&
      check.cost >= state.denyCost &&
      check.limit.rate === state.rate &&
      check.limit.burst === state.burst
    );
  }

  /** What a held check reports: the bucket as last seen, and the wait left as `retryAfterMs`. */
  decision(check: TokenBucketCheck, state: KeyState, now: number): RateLimitDecision {
    const view = gcraPeek(state.shadowTat, now, check.limit);
    return {
      allowed: false,
      remaining: view.remaining,
      retryAfterMs: denyWaitMs(
        state.denyUntil,
        state.denyCost,
        check.cost,
        emissionIntervalMs(check.limit),
        now,
      ),
      resetMs: view.resetMs,
      reason: 'limit',
    };
  }

  /** Redis denied `check`: hold it for `waitMs` (its retry time, and for a hot key its hold). */
  holdAfterDenial(check: TokenBucketCheck, state: KeyState, now: number, waitMs: number): void {
    state.denyUntil = now + waitMs;
    state.denyCost = check.cost;
  }

  /**
   * Redis admitted `check` but its lease came back short: hold the key until
   * `tokens` more have refilled (none: until now), so that the next call
   * takes a batch rather than the token or two that trickled in.
   */
  holdAfterShortLease(check: TokenBucketCheck, state: KeyState, now: number, tokens: number): void {
    state.denyUntil = now + Math.max(0, tokens) * emissionIntervalMs(check.limit);
    state.denyCost = check.cost;
  }

  /** Forgets the key's hold (Redis admitted it with a whole lease, or its bucket got tokens back). */
  clear(state: KeyState): void {
    state.denyUntil = Number.NEGATIVE_INFINITY;
  }
}
