/** Why a request was denied, when it was. */
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
  /** Milliseconds until the bucket is full again. */
  readonly resetMs: number;
  /** Set on denials. */
  readonly reason?: DenyReason;
}
