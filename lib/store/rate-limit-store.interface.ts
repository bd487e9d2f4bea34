import type { RateLimitDecision } from '../algorithms/gcra.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';

/** One bucket to check within a {@link ConsumeRequest}. */
export interface RateLimitCheck {
  /** Fully namespaced bucket key (limit name, route and caller already folded in, length bounded). */
  readonly key: string;
  /** Refill rate in tokens per second, read on every decision (adaptive limits change it). */
  readonly rate: number;
  /** Bucket capacity in tokens. */
  readonly burst: number;
  /** Tokens this request takes from the bucket (> 0). */
  readonly cost: number;
}

/** What {@link RateLimitStore.consume} is asked. */
export interface ConsumeRequest {
  /** Every bucket the request must pass; admitted only if all admit. */
  readonly checks: readonly RateLimitCheck[];
  /**
   * The module clock's time in milliseconds. Stores that keep their own time
   * (Redis server time) may ignore it.
   */
  readonly now: number;
  /**
   * How the caller resolves a failure of this request. `'local'` asks a
   * store with {@link RateLimitStore.localFallback} to decide locally rather
   * than fail; other stores ignore it. Omitted: fail (throw or reject).
   */
  readonly failMode?: FailMode;
}

/** What {@link RateLimitStore.consume} answers. */
export interface ConsumeResult {
  /** True when every check admitted and every bucket was charged. */
  readonly allowed: boolean;
  /**
   * One decision per check, in request order. When the request is denied,
   * nothing was charged: admitting checks report their bucket as it is.
   */
  readonly decisions: readonly RateLimitDecision[];
}

/** What {@link RateLimitStore.peek} and {@link RateLimitStore.reset} are asked. */
export interface BucketsRequest {
  readonly checks: readonly Omit<RateLimitCheck, 'cost'>[];
  readonly now: number;
}

/** A value, or a promise of it: stores that can answer synchronously should. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * The contract every store implements (memory, Redis, two-tier, your own).
 *
 * Implementations must be all-or-nothing across the checks of one
 * {@link ConsumeRequest}: if any check denies, no bucket is charged. A store
 * that fails throws (or rejects) and the module resolves the failure with
 * `failMode`; being over the limit is a normal result, never an error.
 *
 * @publicApi
 */
export interface RateLimitStore {
  /**
   * True when the store can keep deciding from a local share of each limit
   * while its shared backend fails, as `failMode: 'local'` asks
   * (`TwoTierStore`). The module refuses `failMode: 'local'` at start-up
   * with a store that cannot.
   */
  readonly localFallback?: boolean;
  /** Charge every check's bucket, or none of them. */
  consume(request: ConsumeRequest): MaybePromise<ConsumeResult>;
  /** Report each bucket as it is now, without charging it. */
  peek(request: BucketsRequest): MaybePromise<ConsumeResult>;
  /** Forget the buckets: they are full again. */
  reset(request: BucketsRequest): MaybePromise<void>;
  /** Release resources (timers, connections the store owns). Idempotent. */
  close(): MaybePromise<void>;
}
