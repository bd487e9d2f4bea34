/**
 * The local state of a bucket key in `TwoTierStore` (`KeyState`), and the
 * pure helpers on it that more than one part of the store reads: what a key
 * holds, what `close()` gives back of it, how a lease is emptied.
 */
import type { TokenBucketLimit } from '../../lib/store/rate-limit-store.interface.js';

/**
 * Local state of one bucket key: one mutable record per key, shared by the
 * parts of `TwoTierStore` (each owns a few fields), so that a decision
 * allocates nothing for it.
 *
 * @internal
 */
export interface KeyState {
  /** Limit last seen for the key (a cached denial only holds for the same limit). */
  rate: number;
  burst: number;
  /** Demand: tokens asked, decayed with time constant `leaseTtlMs`, as of `seenAt`. */
  score: number;
  seenAt: number;
  /** When the key started being tracked (a young key's demand is its count over its age). */
  firstSeen: number;
  /** Extra tokens worth leasing for the next Redis call (from the demand before this request). */
  target: number;
  /**
   * The bucket as this instance last saw it, without its own lease: the
   * theoretical arrival time in the store's relative frame. What decisions
   * report (exactly what RedisStore would answer when no other instance
   * touched the bucket since).
   */
  shadowTat: number | undefined;
  /** Bucket time held locally (leased tokens x emission interval, in ms). */
  leaseMs: number;
  /** When the lease must be given back (store clock). */
  leaseExpiresAt: number;
  /** No Redis call for this key before this (relative ms): cached denial or batch hold. */
  denyUntil: number;
  /** The cost that was denied (a cheaper request is asked of Redis). */
  denyCost: number;
  /**
   * How many instances seem to drain this bucket (>= 1): doubled when a hot
   * key's call comes back short, decayed when it gets a whole lease. Spaces
   * this instance's calls so that each finds a batch.
   */
  contention: number;
  /**
   * Instances leasing this bucket, as Redis last counted them
   * (`fleet-share.ts`); 0 until counted. When known, it paces this key's
   * calls instead of {@link contention}.
   */
  instances: number;
  /**
   * The bucket's epoch as Redis last answered it ('' until a fleet call
   * answered one) and when (store clock): told back while recent, so that
   * Redis can tell a bucket lost under this instance's lease (`fleet-share.ts`).
   */
  epoch: string;
  epochAt: number;
  /**
   * The fleet's demand for the bucket over this instance's, as Redis last
   * summed it (`fleet-share.ts`): how many batches of refill this instance
   * waits for after a short call, so that shares follow demand; 0 unknown.
   */
  fleetLoad: number;
  /**
   * The key's pace (`pace.ts`): tokens per second (0: none), due from
   * `paceFrom` to `paceUntil` (store clock), `paceDue` of them already
   * credited to the lease (`leaseMs`).
   */
  paceRate: number;
  paceFrom: number;
  paceUntil: number;
  paceDue: number;
  /**
   * Of the lease (`leaseMs`), what came due from the pace and is not spent
   * yet (bucket time, ms): at most the pace's share of the burst and what
   * Redis lent with it (`paceLentMs`, `savingsCapMs`), shrinking at
   * `endedPaceRate` once the pace has ended.
   */
  paceSavedMs: number;
  /** The savings Redis lent with the pace (bucket time, ms; infinite when it did not say). */
  paceLentMs: number;
  /**
   * Of the lease (`leaseMs`), what is left of the bucket's own tokens a pace
   * call took at once (bucket time, ms), no longer spendable from `lumpUntil`
   * (the requests' time) on (`pace.ts`, `LUMP_LEASE_TTLS`): it is then owed
   * back (`owedMs`).
   */
  lumpMs: number;
  lumpUntil: number;
  /**
   * Tokens taken from the bucket that are no longer spent and not given back
   * yet (bucket time, ms, outside the lease): a lapsed lump, or, in a fleet,
   * a lease that expired ({@link KeyTable.expire}). They go with the key's
   * next call (a pace's `giveBack`, or a give-back sent before it), else by
   * a call of their own at `leaseExpiresAt`, or at the key's release.
   */
  owedMs: number;
  /** The rate of the pace that ended at `paceUntil` while savings remain (0: none). */
  endedPaceRate: number;
  /** When those savings last shrank (store clock). */
  savingsShrunkAt: number;
  /** Settles when this key's Redis call in flight is answered: true if Redis answered, false if the call failed. Never rejects. */
  pending: Promise<boolean> | undefined;
  /** When that call gives up at the latest (`performance.now()` ms). */
  pendingDeadline: number;
}

/** The state of a key first seen at `now` (relative ms), for `limit`: no demand, no view, no lease, no hold. */
export function newKeyState(limit: TokenBucketLimit, now: number): KeyState {
  return {
    rate: limit.rate,
    burst: limit.burst,
    score: 0,
    seenAt: now,
    firstSeen: now,
    target: 0,
    shadowTat: undefined,
    leaseMs: 0,
    leaseExpiresAt: 0,
    denyUntil: Number.NEGATIVE_INFINITY,
    denyCost: 0,
    contention: 1,
    instances: 0,
    epoch: '',
    epochAt: 0,
    fleetLoad: 0,
    paceRate: 0,
    paceFrom: 0,
    paceUntil: 0,
    paceDue: 0,
    paceSavedMs: 0,
    paceLentMs: Number.POSITIVE_INFINITY,
    lumpMs: 0,
    lumpUntil: 0,
    owedMs: 0,
    endedPaceRate: 0,
    savingsShrunkAt: 0,
    pending: undefined,
    pendingDeadline: 0,
  };
}

/** True when the key holds tokens to give back: a lease, or tokens owed. */
export function holds(state: KeyState): boolean {
  return state.leaseMs > 0 || state.owedMs > 0;
}

/**
 * True while `close()` has something of the key to give back: tokens held or
 * owed, or a live pace (its part not yet due), even with every token that
 * came due spent. Such keys stay in `KeyTable.leased`.
 */
export function givesBackAtClose(state: KeyState): boolean {
  return holds(state) || state.paceRate > 0;
}

/**
 * Empties the key's lease, with what it saved and what it owes, and answers
 * the bucket time (ms) they held: what goes back to Redis, now or owed.
 */
export function emptyLease(state: KeyState): number {
  const ms = state.leaseMs + state.owedMs;
  state.leaseMs = 0;
  state.paceSavedMs = 0;
  state.lumpMs = 0;
  state.owedMs = 0;
  state.endedPaceRate = 0;
  return ms;
}
