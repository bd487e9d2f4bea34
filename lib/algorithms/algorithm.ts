import type {
  StoreLimit,
  TokenBucketLimit,
  WindowLimit,
} from '../store/rate-limit-store.interface.js';
import { fixedWindowConsume } from './fixed-window.js';
import { gcraConsume, gcraPeek, gcraRefund } from './gcra.js';
import type { RateLimitDecision } from './rate-limit-decision.js';
import { slidingWindowConsume } from './sliding-window.js';
import { windowRefund, type WindowState } from './window-state.js';

/**
 * What an in-process store keeps per key: a GCRA theoretical arrival time
 * (a number, in the store's relative frame) or a window's state (an object,
 * in absolute time: windows are aligned on the epoch or the calendar).
 */
export type BucketState = number | WindowState;

/**
 * An algorithm as the in-process stores use it: pure functions of a bucket's
 * stored state (`undefined` for a key never seen), the time and the limit.
 *
 * `now` is in the store's frame (relative to its first request, where doubles
 * are fine enough for GCRA); `origin` is the absolute time of that frame's 0,
 * which the window algorithms add back (0 for a store in absolute time).
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export interface BucketAlgorithm {
  /** Charge `cost`: the decision, and the state to store when admitted. */
  consume(
    state: BucketState | undefined,
    now: number,
    limit: StoreLimit,
    cost: number,
    origin: number,
  ): { readonly state: BucketState; readonly decision: RateLimitDecision };
  /** The bucket as it is, without charging it. */
  peek(
    state: BucketState | undefined,
    now: number,
    limit: StoreLimit,
    origin: number,
  ): RateLimitDecision;
  /** Give `tokens` back: the state to store, `undefined` when the bucket is full again. */
  refund(
    state: BucketState | undefined,
    now: number,
    limit: StoreLimit,
    tokens: number,
    origin: number,
  ): BucketState | undefined;
}

// A key's algorithm is fixed by the tag in its bucket key (bucket-key.ts), so
// a state of the other kind is never read: the casts below only narrow.
const tokenBucket: BucketAlgorithm = {
  consume(state, now, limit, cost) {
    const outcome = gcraConsume(state as number | undefined, now, limit as TokenBucketLimit, cost);
    return { state: outcome.tat, decision: outcome.decision };
  },
  peek: (state, now, limit) =>
    gcraPeek(state as number | undefined, now, limit as TokenBucketLimit),
  refund: (state, now, limit, tokens) =>
    gcraRefund(state as number | undefined, now, limit as TokenBucketLimit, tokens),
};

function windowAlgorithm(
  consume: (
    state: WindowState | undefined,
    now: number,
    limit: never,
    cost: number,
  ) => { readonly state: WindowState; readonly decision: RateLimitDecision },
): BucketAlgorithm {
  return {
    consume: (state, now, limit, cost, origin) =>
      consume(state as WindowState | undefined, now + origin, limit as WindowLimit as never, cost),
    peek: (state, now, limit, origin) =>
      consume(state as WindowState | undefined, now + origin, limit as WindowLimit as never, 0)
        .decision,
    refund: (state, now, _limit, tokens, origin) =>
      windowRefund(state as WindowState | undefined, now + origin, tokens),
  };
}

const ALGORITHMS: Readonly<Record<string, BucketAlgorithm>> = {
  'token-bucket': tokenBucket,
  'fixed-window': windowAlgorithm(fixedWindowConsume),
  'sliding-window': windowAlgorithm(slidingWindowConsume),
};

/**
 * When a stored state stops mattering, in the store's relative frame: a
 * GCRA TAT is the moment the bucket is full again; a window state carries its
 * absolute expiry. A state at or past it decides as an absent key would, so
 * stores delete it (sweeps) or evict it first.
 *
 * @internal
 */
export function expiryOf(state: BucketState, origin: number): number {
  return typeof state === 'number' ? state : state.expires - origin;
}

/**
 * The algorithm a check's limit belongs to. A limit of an algorithm this
 * build does not know is a wiring bug (a custom store fed by a newer module),
 * so it throws rather than guessing.
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export function algorithmOf(limit: StoreLimit): BucketAlgorithm {
  const algorithm = ALGORITHMS[limit.algorithm];
  if (algorithm === undefined)
    throw new TypeError(`Unknown rate-limit algorithm ${JSON.stringify(limit.algorithm)}`);
  return algorithm;
}
