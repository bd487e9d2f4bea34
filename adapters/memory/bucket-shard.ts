import { SweptMap } from '../../lib/store/swept-map.js';

/**
 * One slice of the memory store: bucket key → stored state (GCRA theoretical
 * arrival time), kept in charge order (a charged key moves to the end), with
 * an incremental sweep and oldest-first eviction.
 *
 * Why slices: V8 rehashes a `Map` in one go when it grows or has accumulated
 * deletions; at a million entries a single operation took 127-147 ms on
 * this project's machines (README, "MemoryStore": `node bench/map-rehash.mjs`).
 * Slices of ~16k entries rehash in well under a millisecond.
 *
 * @internal
 */
export class BucketShard extends SweptMap<string, number> {
  /**
   * Examine up to `steps` entries from where the last sweep stopped and drop
   * those whose bucket is full again (state not after `now`): exact, since a
   * full bucket and an absent key decide the same. Stops early at the end of
   * a pass (the next call starts a new one). Returns the entries examined.
   */
  sweep(now: number, steps: number): number {
    for (let examined = 0; examined < steps; examined++) {
      const key = this.nextToSweep();
      if (key === undefined) return examined;
      const tat = this.entries.get(key);
      if (tat !== undefined && tat <= now) this.entries.delete(key);
    }
    return steps;
  }

  /** Drop the least recently charged bucket; false when the shard is empty. */
  evictOldest(): boolean {
    const oldest = this.oldest();
    return oldest !== undefined && this.entries.delete(oldest);
  }
}
