/**
 * Why a request was denied, when it was. `'cost-exceeds-burst'`: the cost is
 * larger than the bucket's burst (or a window's quota), so no wait helps.
 */
export type DenyReason = 'limit' | 'cost-exceeds-burst';

/** The outcome of one check of one bucket. */
export interface RateLimitDecision {
  /** Whether the request may proceed. */
  readonly allowed: boolean;
  /** Whole tokens left in the bucket after this decision. */
  readonly remaining: number;
  /**
   * Milliseconds until the same request (same cost) could be admitted; 0 when
   * admitted, `Infinity` when it never can be (cost larger than the burst).
   */
  readonly retryAfterMs: number;
  /**
   * Milliseconds until the bucket is full again. Fixed window: until the
   * window ends and its count starts over (0 while nothing is counted).
   * Sliding window: until the estimate is back to 0.
   */
  readonly resetMs: number;
  /**
   * Window algorithms only: milliseconds within which a caller who spends
   * `remaining` now gets nothing more (draft-ietf-httpapi-ratelimit-headers'
   * `t`): until the window ends (fixed), until one more request's weight has
   * slid out (sliding). Token buckets leave it out: their `t` follows from
   * `resetMs` and the limit (`nextTokenMs`).
   */
  readonly effectiveWindowMs?: number;
  /** Set on denials. */
  readonly reason?: DenyReason;
}
