import { expiryOf, type BucketState } from '../../lib/algorithms/algorithm.js';
import { SweptMap } from '../../lib/store/swept-map.js';
import { BucketSlots } from './bucket-slots.js';
import { evictsBefore } from './eviction-order.js';

/** Which held states serve a block (`MemoryBucketChanges`): eviction keeps them over any other. */
export interface BlockedStates {
  serving(namespace: string, identity: string, state: BucketState, now: number): boolean;
}

/** Buckets compared when one must be evicted (see {@link BucketShard.evictClosestToFull}). */
export const EVICTION_CANDIDATES = 8;

/**
 * One slice of the memory store: caller identity → stored state (GCRA
 * theoretical arrival time, or a window's state: compared by
 * {@link expiryOf}), kept in insertion order, with an incremental sweep (over
 * the slots, see {@link BucketShard.sweep}) and,
 * at the cap, eviction of the state whose loss admits least among a few
 * candidates taken from the oldest end.
 *
 * The map holds a slot number per identity and the states live in
 * {@link BucketSlots} (plain memory, not one heap object per bucket): a
 * bucket charged again is one hash lookup and a write in place.
 *
 * Why slices: V8 rehashes a `Map` in one go when it grows or has accumulated
 * deletions; at a million entries a single operation took 127-147 ms on
 * this project's machines (README, "MemoryStore": `node bench/map-rehash.mjs`).
 * Slices of ~4k entries rehash in a fraction of that, and many rehashing at
 * about the same time under churn stay under 50 ms (see `SHARD_SIZE` in
 * `memory.store.ts`).
 *
 * @internal
 */
export class BucketShard {
  /** Identity → slot, in insertion order, with the eviction cursor (the sweep walks the slots). */
  private readonly index = new SweptMap<string, number>();
  private readonly states = new BucketSlots();
  /** Eviction candidates held over from earlier evictions (the first {@link held} slots). */
  private readonly candidates: (string | undefined)[] = new Array<string | undefined>(
    EVICTION_CANDIDATES,
  ).fill(undefined);
  private held = 0;
  /** The next slot the sweep examines. */
  private sweepSlot = 0;

  /** `namespace`: the table's, for {@link BlockedStates} (bucket keys are namespace + identity). */
  constructor(readonly namespace = '') {}

  get size(): number {
    return this.index.size;
  }

  /** The slot of `key`'s state, or -1 when the bucket is not held. */
  slotOf(key: string): number {
    return this.index.entries.get(key) ?? -1;
  }

  stateAt(slot: number): BucketState {
    return this.states.read(slot);
  }

  /** Replace the state in a slot: a bucket held, no hash operation at all. */
  update(slot: number, state: BucketState): void {
    this.states.write(slot, state);
  }

  get(key: string): BucketState | undefined {
    const slot = this.index.entries.get(key);
    return slot === undefined ? undefined : this.states.read(slot);
  }

  /** Hold a bucket known not to be held. */
  add(key: string, state: BucketState): void {
    this.index.add(key, this.states.allocate(key, state));
  }

  delete(key: string): boolean {
    const slot = this.index.entries.get(key);
    if (slot === undefined) return false;
    this.index.delete(key);
    this.states.release(slot);
    return true;
  }

  /** The identities held, oldest first. */
  keys(): IterableIterator<string> {
    return this.index.entries.keys();
  }

  /**
   * Examine up to `steps` slots from where the last sweep stopped and drop
   * the buckets full again (state not after `now`): exact, since a full
   * bucket and an absent key decide the same. Walks the slots in order, not
   * the `Map` (see `BucketSlots.keyAt`); a free slot counts as examined, so
   * the work per call stays bounded. Stops early at the end of a pass (the
   * next call starts a new one). Returns the slots examined.
   */
  sweep(now: number, steps: number, origin = 0): number {
    const states = this.states;
    const end = states.slotCount;
    for (let examined = 0; examined < steps; examined++) {
      if (this.sweepSlot >= end) {
        this.sweepSlot = 0;
        return examined;
      }
      const slot = this.sweepSlot++;
      const key = states.keyAt(slot);
      if (key !== undefined && this.expiry(slot, origin) <= now) {
        this.index.delete(key);
        states.release(slot);
      }
    }
    return steps;
  }

  /**
   * Drop, among {@link EVICTION_CANDIDATES} candidates, the state whose loss
   * admits least ({@link evictsBefore}: a block is kept over anything, then
   * the token bucket closest to full, the window holding the least count);
   * one already full goes at once, which changes no decision. Never `except`
   * (the key just added). False when there is nothing else to drop.
   * `blocks`: which states serve a block (omitted: none does);
   * `spareBlocked`: drop nothing (false) when the pick serves a block, so
   * that the store may look for a state to drop elsewhere first.
   *
   * Candidates come from the oldest end (first inserted); one passed over
   * stays a candidate (its state re-read each time), so a bucket drained
   * further than the others, typically a denied one, is only dropped once
   * {@link EVICTION_CANDIDATES} - 1 other candidates are at least as far from
   * full: minting fresh keys (one charge each) never hands it back. Work per
   * call: at most 2 x {@link EVICTION_CANDIDATES} cursor steps and
   * {@link EVICTION_CANDIDATES} lookups, whatever the shard's size.
   */
  evictClosestToFull(
    now: number,
    except?: string,
    origin = 0,
    blocks?: BlockedStates,
    spareBlocked = false,
  ): boolean {
    const candidates = this.candidates;
    const entries = this.index.entries;
    // Forget candidates that left meanwhile (swept, reset, refunded to full).
    for (let i = 0; i < this.held;) {
      if (entries.has(candidates[i]!)) i++;
      else candidates[i] = candidates[--this.held];
    }
    for (
      let steps = 0;
      this.held < EVICTION_CANDIDATES && steps < 2 * EVICTION_CANDIDATES;
      steps++
    ) {
      const key = this.index.oldest();
      if (key === undefined) break;
      if (key !== except && !this.holds(key)) candidates[this.held++] = key;
    }
    let pick = -1;
    let pickState: BucketState = 0;
    let pickBlocked = false;
    for (let i = 0; i < this.held; i++) {
      const key = candidates[i]!;
      const slot = entries.get(key)!;
      if (this.expiry(slot, origin) <= now) {
        pick = i; // full again: its loss changes nothing
        pickBlocked = false;
        break;
      }
      const state = this.states.read(slot);
      const blocked = blocks !== undefined && blocks.serving(this.namespace, key, state, now);
      if (pick === -1 || evictsBefore(state, blocked, pickState, pickBlocked, now, origin)) {
        pick = i;
        pickState = state;
        pickBlocked = blocked;
      }
    }
    if (pick === -1 || (spareBlocked && pickBlocked)) return false;
    const key = candidates[pick]!;
    candidates[pick] = candidates[--this.held];
    candidates[this.held] = undefined;
    return this.delete(key);
  }

  clear(): void {
    this.index.clear();
    this.states.clear();
    this.sweepSlot = 0;
    this.candidates.fill(undefined);
    this.held = 0;
  }

  /** When the bucket in `slot` is full again, in the store's frame. */
  private expiry(slot: number, origin: number): number {
    const time = this.states.time(slot);
    // NaN: the slot holds a window state.
    return time === time ? time : expiryOf(this.states.read(slot), origin);
  }

  private holds(key: string): boolean {
    for (let i = 0; i < this.held; i++) if (this.candidates[i] === key) return true;
    return false;
  }
}
