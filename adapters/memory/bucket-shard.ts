import { expiryOf, type BucketState } from '../../lib/algorithms/algorithm.js';
import { SweptMap } from '../../lib/store/swept-map.js';

/** Buckets compared when one must be evicted (see {@link BucketShard.evictClosestToFull}). */
export const EVICTION_CANDIDATES = 8;

/**
 * One slice of the memory store: bucket key → stored state (GCRA theoretical
 * arrival time, or a window's state: compared by {@link expiryOf}), kept in insertion order (a bucket charged again is updated in place), with
 * an incremental sweep and, at the cap, eviction of the bucket closest to
 * full among a few candidates taken from the oldest end.
 *
 * Why slices: V8 rehashes a `Map` in one go when it grows or has accumulated
 * deletions; at a million entries a single operation took 127-147 ms on
 * this project's machines (README, "MemoryStore": `node bench/map-rehash.mjs`).
 * Slices of ~16k entries rehash in well under a millisecond.
 *
 * @internal
 */
export class BucketShard extends SweptMap<string, BucketState> {
  /** Eviction candidates held over from earlier evictions (the first {@link held} slots). */
  private readonly candidates: (string | undefined)[] = new Array<string | undefined>(EVICTION_CANDIDATES).fill(undefined);
  private held = 0;

  /**
   * Examine up to `steps` entries from where the last sweep stopped and drop
   * those whose bucket is full again (state not after `now`): exact, since a
   * full bucket and an absent key decide the same. Stops early at the end of
   * a pass (the next call starts a new one). Returns the entries examined.
   */
  sweep(now: number, steps: number, origin = 0): number {
    for (let examined = 0; examined < steps; examined++) {
      const key = this.nextToSweep();
      if (key === undefined) return examined;
      const state = this.entries.get(key);
      if (state !== undefined && expiryOf(state, origin) <= now) this.entries.delete(key);
    }
    return steps;
  }

  /**
   * Drop the bucket closest to full among {@link EVICTION_CANDIDATES}
   * candidates (the earliest TAT; one already full goes at once, which
   * changes no decision), never `except` (the key just added). False when
   * there is nothing else to drop.
   *
   * Candidates come from the oldest end (first inserted); one passed over
   * stays a candidate (its TAT re-read each time), so a bucket drained
   * further than the others, typically a denied one, is only dropped once
   * {@link EVICTION_CANDIDATES} - 1 other candidates are at least as far from
   * full: minting fresh keys (one charge each) never hands it back. Work per
   * call: at most 2 x {@link EVICTION_CANDIDATES} cursor steps and
   * {@link EVICTION_CANDIDATES} lookups, whatever the shard's size.
   */
  evictClosestToFull(now: number, except?: string, origin = 0): boolean {
    const candidates = this.candidates;
    // Forget candidates that left meanwhile (swept, reset, refunded to full).
    for (let i = 0; i < this.held; ) {
      if (this.entries.has(candidates[i]!)) i++;
      else candidates[i] = candidates[--this.held];
    }
    for (let steps = 0; this.held < EVICTION_CANDIDATES && steps < 2 * EVICTION_CANDIDATES; steps++) {
      const key = this.oldest();
      if (key === undefined) break;
      if (key !== except && !this.holds(key)) candidates[this.held++] = key;
    }
    let pick = -1;
    let earliest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.held; i++) {
      const tat = expiryOf(this.entries.get(candidates[i]!)!, origin);
      if (pick === -1 || tat < earliest) {
        pick = i;
        earliest = tat;
        if (tat <= now) break;
      }
    }
    if (pick === -1) return false;
    const key = candidates[pick]!;
    candidates[pick] = candidates[--this.held];
    candidates[this.held] = undefined;
    return this.entries.delete(key);
  }

  override clear(): void {
    super.clear();
    this.candidates.fill(undefined);
    this.held = 0;
  }

  private holds(key: string): boolean {
    for (let i = 0; i < this.held; i++) if (this.candidates[i] === key) return true;
    return false;
  }
}
