/**
 * An adaptive `concurrency` limit moved: the calls it allows in flight for
 * `key`, before and after, with the calls in flight and waiting then. What
 * the limiter reports, and what the `limit-change` event and channel carry
 * (with the limit's name).
 */
export interface ConcurrencyLimitChange {
  readonly key: string;
  readonly from: number;
  readonly to: number;
  readonly inFlight: number;
  readonly queued: number;
  /** The no-load latency the limit measures against (milliseconds). */
  readonly noLoadRttMs: number | undefined;
}
