import type { StoreLimit } from '../store/rate-limit-store.interface.js';
import { gcraConsume, gcraPeek, gcraRefund } from './gcra.js';
import type { RateLimitDecision } from './rate-limit-decision.js';

/**
 * An algorithm as the in-process stores use it: pure functions of a bucket's
 * stored state (one number per key so far; `undefined` for a key never seen),
 * the time and the limit.
 *
 * @internal
 */
export interface BucketAlgorithm {
  /** Charge `cost`: the decision, and the state to store when admitted. */
  consume(state: number | undefined, now: number, limit: StoreLimit, cost: number): { readonly tat: number; readonly decision: RateLimitDecision };
  /** The bucket as it is, without charging it. */
  peek(state: number | undefined, now: number, limit: StoreLimit): RateLimitDecision;
  /** Give `tokens` back: the state to store, `undefined` when the bucket is full again. */
  refund(state: number | undefined, now: number, limit: StoreLimit, tokens: number): number | undefined;
}

const tokenBucket: BucketAlgorithm = { consume: gcraConsume, peek: gcraPeek, refund: gcraRefund };

const ALGORITHMS: Readonly<Record<string, BucketAlgorithm>> = { 'token-bucket': tokenBucket };

/**
 * The algorithm a check's limit belongs to. A limit of an algorithm this
 * build does not know is a wiring bug (a custom store fed by a newer module),
 * so it throws rather than guessing.
 *
 * @internal
 */
export function algorithmOf(limit: StoreLimit): BucketAlgorithm {
  const algorithm = ALGORITHMS[limit.algorithm];
  if (algorithm === undefined) throw new TypeError(`Unknown rate-limit algorithm ${JSON.stringify(limit.algorithm)}`);
  return algorithm;
}
