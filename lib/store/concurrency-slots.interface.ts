import type { MaybePromise } from '../util/maybe-promise.js';

/**
 * The optional store capability behind `concurrency` limits: counted slots
 * per key, each held by one request until it is released or its lease runs
 * out. Beside the store contract rather than in it, so that stores written
 * for rate limits alone keep compiling; the module refuses a `concurrency`
 * limit at start-up with a store that has none.
 *
 * One key per call (a Redis Cluster keeps each key in one slot).
 *
 * @publicApi
 */
export interface ConcurrencySlots {
  /** Take one slot of `key` if fewer than `limit` are held (expired leases do not count). */
  acquire(request: SlotAcquireRequest): MaybePromise<SlotAcquireResult>;
  /**
   * Give the slot `id` back. Releasing a slot that is not held (expired,
   * released, never acquired) does nothing to the slots held. The caller also
   * releases the ids of acquisitions it gave up waiting for (timed out): a
   * store that can run an acquisition after its caller gave up (Redis, after
   * a stall) must let such a release win even if it arrives first, e.g. by
   * refusing, for `leaseMs`, an acquisition of an id already released.
   */
  release(request: SlotReleaseRequest): MaybePromise<void>;
  /** The slots of `key` held now (leases not run out): for tests and diagnostics. Optional. */
  inFlight?(key: string, now: number): MaybePromise<number>;
}

/** What {@link ConcurrencySlots.acquire} is asked. */
export interface SlotAcquireRequest {
  /** Namespaced key (limit, route, caller), as for a bucket. */
  readonly key: string;
  /** Slots the key may hold at once (a positive integer). */
  readonly limit: number;
  /** Unique per acquisition: what {@link ConcurrencySlots.release} names. */
  readonly id: string;
  /** How long the slot is held at most if never released (a crashed process), in milliseconds. */
  readonly leaseMs: number;
  /** The module clock. Stores with a shared clock (Redis server time) ignore it. */
  readonly now: number;
}

/** What {@link ConcurrencySlots.acquire} answers. */
export interface SlotAcquireResult {
  readonly allowed: boolean;
  /** Slots held after this call: this one included when allowed. */
  readonly inFlight: number;
}

/** What {@link ConcurrencySlots.release} is asked. */
export interface SlotReleaseRequest {
  readonly key: string;
  readonly id: string;
  /** The lease the slot was asked with: how long a late acquisition of `id` could still hold it. */
  readonly leaseMs?: number;
  readonly now: number;
}
