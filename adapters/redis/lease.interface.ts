import type {
  ConsumeRequest,
  ConsumeResult,
  RateLimitCheck,
} from '../../lib/store/rate-limit-store.interface.js';

/**
 * One check of a {@link LeaseRequest}: a consume check, plus how many more
 * tokens the caller would like to take along.
 */
export interface LeaseCheck extends RateLimitCheck {
  /**
   * Whole tokens wanted beyond `cost`, taken only as far as the bucket holds
   * them after the cost (0: a plain consume). Never decides the admission.
   */
  readonly maxExtra: number;
}

/** What `RedisStore.lease` is asked. */
export interface LeaseRequest {
  readonly checks: readonly LeaseCheck[];
  /** As {@link ConsumeRequest.now}. */
  readonly now: number;
  /**
   * Count the instances leasing each bucket asked with `maxExtra > 0` (a
   * sorted set beside it, in the same script call): this instance's `id`,
   * and how long (ms) an instance counts after its last lease call.
   * Answered in {@link LeaseResult.instances}. Ignored (no count) when the
   * checks span several Cluster slots.
   */
  readonly fleet?: { readonly id: string; readonly windowMs: number };
}

/** What `RedisStore.lease` answers. */
export interface LeaseResult extends ConsumeResult {
  /**
   * Per check, the extra whole tokens taken from its bucket beyond the cost
   * (all 0 when the request is denied). The decisions are those of a plain
   * consume: the bucket after the cost, before the extras.
   */
  readonly extras: readonly number[];
  /**
   * With {@link LeaseRequest.fleet}: per check, the instances (this one
   * included) that asked its bucket for a lease within the window; 0 for a
   * check asking no extra. Absent without a fleet count.
   */
  readonly instances?: readonly number[];
}
