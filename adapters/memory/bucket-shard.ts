import { MapCursor } from './map-cursor.js';

/**
 * One slice of the memory store: a `Map` from bucket key to theoretical
 * arrival time, kept in charge order (a charged key is moved to the end), with
 * a hard cap and an incremental sweep.
 *
 * Why slices: V8 rehashes a `Map` in one go when it grows or has accumulated
 * deletions; at a million entries that is a pause of 80-300 ms on this
 * project's machines. Slices of ~16k entries rehash in well under a
 * millisecond.
 *
 * @internal
 */
export class BucketShard {
  readonly tats = new Map<string, number>();
  /**
   * Only ever advanced by eviction, so every entry before it is gone and its
   * next live entry is the least recently charged one. A fresh `keys()` per
   * eviction would walk the deleted slots V8 keeps until the next rehash.
   */
  private readonly evictionCursor = new MapCursor(this.tats);
  private readonly sweepCursor = new MapCursor(this.tats);

  /** Store `tat` for `key`, moving it to the end (charge order). True when the key is new. */
  write(key: string, tat: number): boolean {
    const existed = this.tats.delete(key);
    this.tats.set(key, tat);
    this.evictionCursor.inserted();
    this.sweepCursor.inserted();
    return !existed;
  }

  /**
   * Examine up to `steps` entries from where the last sweep stopped and drop
   * those whose bucket is full again (TAT not after `now`): exact, since a
   * full bucket and an absent key decide the same. Stops early at the end of
   * a pass (the next call starts a new one). Returns the entries examined.
   */
  sweep(now: number, steps: number): number {
    for (let examined = 0; examined < steps; examined++) {
      const key = this.sweepCursor.next();
      if (key === undefined) return examined;
      const tat = this.tats.get(key);
      if (tat !== undefined && tat <= now) this.tats.delete(key);
    }
    return steps;
  }

  /** Drop the least recently charged bucket; false when the shard is empty. */
  evictOldest(): boolean {
    // At the end of a pass, the next step starts over from the oldest entry.
    const oldest = this.evictionCursor.next() ?? this.evictionCursor.next();
    return oldest !== undefined && this.tats.delete(oldest);
  }

  clear(): void {
    this.tats.clear();
    this.evictionCursor.restart();
    this.sweepCursor.restart();
  }
}
