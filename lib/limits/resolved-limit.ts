import type { ExecutionContext } from '@nestjs/common';
import type { AdaptiveConfig } from '../adaptive/resolve-adaptive-options.js';
import type {
  FailMode,
  RateLimitOutcome,
  RateLimitSettleOutcome,
  SkipPredicate,
} from '../interfaces/rate-limit-options.interface.js';
import type { Identify } from '../keys/key-strategy.js';
import type { StoreLimit } from '../store/rate-limit-store.interface.js';
import type { BucketLimit } from '../algorithms/gcra.js';
import type { MaybePromise } from '../util/maybe-promise.js';

/** A limit's `charge` and `isChargeFailure` (its `isFailure` field), validated (`policies/charge-by-outcome.ts`). @internal */
export interface ChargePolicy {
  readonly mode: 'failures' | 'successes';
  readonly isFailure: ((outcome: RateLimitOutcome) => boolean) | undefined;
}

/** The bucket of a dynamic limit for one call, validated as a declared one is. */
export type DynamicBucket = (context: ExecutionContext) => MaybePromise<BucketLimit>;

/**
 * A limit after start-up validation: numbers instead of strings, the key
 * strategy compiled, the bucket namespace fixed. What the guard uses per request.
 *
 * @internal
 */
export interface ResolvedLimit {
  readonly name: string;
  /** Declared rate, tokens per second (a window: its quota per second, on average). */
  readonly rate: number;
  /** Declared burst, tokens (a window: its quota). */
  readonly burst: number;
  /** The declared bucket as the store takes it (one frozen object, shared by every request). */
  readonly bucket: StoreLimit;
  /** A constant cost, or a function validated on each call. */
  readonly cost: number | ((context: ExecutionContext) => number);
  readonly identify: Identify;
  /** Prefix of every bucket key of this limit: name and route (unless shared). */
  readonly namespace: string;
  readonly failMode: FailMode | undefined;
  readonly adaptive: AdaptiveConfig | undefined;
  /** Set when the limit counts only failures or only successes (a refund after the handler). */
  readonly charge: ChargePolicy | undefined;
  readonly skip: SkipPredicate | undefined;
  /** Decided and charged, never denying (evaluated after the others admitted). */
  readonly shadow: boolean;
  /** Set when `rate` or `burst` is a function of the call: the bucket of each call (then `rate`, `burst` and `bucket` are placeholders). */
  readonly dynamic: DynamicBucket | undefined;
  /** `blockDuration` in milliseconds: the penalty after a denial. */
  readonly blockMs: number | undefined;
  /** `maxDelay` in milliseconds (0: never wait): the store is given the reserving bucket (`policies/delay/reservation.ts`). */
  readonly maxDelayMs: number;
  /** `settle`: what the call really cost, after the handler (`policies/settle.ts`). */
  readonly settle: ((outcome: RateLimitSettleOutcome) => number | Promise<number>) | undefined;
}
