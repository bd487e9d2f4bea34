import type { BucketState } from '../../lib/algorithms/algorithm.js';
import type { WindowState } from '../../lib/algorithms/window-state.js';

/** Slots of a new table; doubled as needed. */
const INITIAL_SLOTS = 16;

/**
 * The states of one shard's buckets, by slot number: GCRA times in a
 * `Float64Array`, window states (objects) beside them.
 *
 * Why not a number per `Map` entry: V8 boxes every double stored in a `Map`
 * (a heap object per bucket, and a new one on every charge), and the
 * collector must visit each of them: at a million keys, that is a million
 * more objects to mark and move in every major collection. In a typed array
 * the times are plain memory, written in place, and the `Map` holds small
 * integers (slot numbers), which are not objects at all.
 *
 * @internal
 */
export class BucketSlots {
  private times = new Float64Array(INITIAL_SLOTS);
  /** Window states, by slot (created with the first window state); the slot's time is then NaN. */
  private windows: (WindowState | undefined)[] | undefined;
  /**
   * The identity held in each slot (`undefined`: a free slot), so the sweep
   * walks the slots in order instead of the `Map`: no iterator result per
   * entry, and no second hash lookup (a cache miss at 100k keys) to find an
   * entry's slot. One pointer per bucket.
   */
  private keys: (string | undefined)[] = [];
  /** Slots given back, reused before new ones. */
  private readonly free: number[] = [];
  private used = 0;

  /** Slots handed out so far (free ones included): the end of a sweep pass. */
  get slotCount(): number {
    return this.used;
  }

  /** A slot holding `key`'s `state`. */
  allocate(key: string, state: BucketState): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.used++;
    if (slot >= this.times.length) {
      const grown = new Float64Array(this.times.length * 2);
      grown.set(this.times);
      this.times = grown;
    }
    this.keys[slot] = key;
    this.write(slot, state);
    return slot;
  }

  /** The identity in `slot`, or `undefined` when the slot is free. */
  keyAt(slot: number): string | undefined {
    return this.keys[slot];
  }

  read(slot: number): BucketState {
    const time = this.times[slot]!;
    return time === time ? time : this.windows![slot]!;
  }

  /** A GCRA time, or NaN when the slot holds a window state. */
  time(slot: number): number {
    return this.times[slot]!;
  }

  write(slot: number, state: BucketState): void {
    if (typeof state === 'number') {
      this.times[slot] = state;
      if (this.windows !== undefined) this.windows[slot] = undefined;
      return;
    }
    this.times[slot] = Number.NaN;
    (this.windows ??= [])[slot] = state;
  }

  release(slot: number): void {
    this.keys[slot] = undefined;
    if (this.windows !== undefined) this.windows[slot] = undefined;
    this.free.push(slot);
  }

  clear(): void {
    this.times = new Float64Array(INITIAL_SLOTS);
    this.windows = undefined;
    this.keys = [];
    this.free.length = 0;
    this.used = 0;
  }
}
