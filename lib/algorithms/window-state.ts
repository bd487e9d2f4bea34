import type { RateLimitDecision } from './rate-limit-decision.js';

/**
 * What a window algorithm keeps per key. Times are absolute (milliseconds
 * since the Unix epoch in the clock's frame): windows are aligned on epoch
 * multiples or calendar boundaries, so the algorithms need the real time,
 * not a store's relative frame. Counts are exact sums of costs (no
 * fractions of time enter them), so the precision concerns of GCRA do not
 * arise here.
 */
export interface WindowState {
  /** Start of the window `count` belongs to. */
  readonly start: number;
  /** Its end (exclusive): `start + windowMs`, or the next calendar boundary. */
  readonly end: number;
  /** Admitted (sum of costs) in that window. */
  readonly count: number;
  /** Sliding windows: admitted in the window just before `start` (0 for fixed windows). */
  readonly previous: number;
  /**
   * From then on the state decides nothing an absent key would not (fixed:
   * the window's end; sliding: one window later, when `count` has slid out
   * too), so stores may drop it: a memory sweep, a Redis expiry.
   */
  readonly expires: number;
}

/** Result of a window algorithm's consume: the decision, and the state to store when admitted. */
export interface WindowOutcome {
  readonly decision: RateLimitDecision;
  readonly state: WindowState;
}

/**
 * Slack in request units under which a count is taken as at the quota:
 * counts are sums of costs, which may be fractions (0.1 + 0.2), and the
 * sliding estimate multiplies by a weight. Same value as the token bucket's.
 */
export const WINDOW_EPSILON = 1e-9;

/** Whole requests of cost 1 left under the quota, never negative. */
export function wholeLeft(quota: number, used: number): number {
  return Math.max(0, Math.floor(quota - used + WINDOW_EPSILON));
}

/**
 * Give `tokens` back to the window they were counted in (the stored one):
 * its count goes down, never below 0. `undefined` when the state no longer
 * matters (expired, or nothing left counted): the key can be deleted.
 */
export function windowRefund(
  state: WindowState | undefined,
  now: number,
  tokens: number,
): WindowState | undefined {
  if (state === undefined || state.expires <= now) return undefined;
  const count = Math.max(0, state.count - tokens);
  if (count <= WINDOW_EPSILON && state.previous <= WINDOW_EPSILON) return undefined;
  return {
    start: state.start,
    end: state.end,
    count,
    previous: state.previous,
    expires: state.expires,
  };
}
