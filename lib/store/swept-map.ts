import { MapCursor } from './map-cursor.js';

/**
 * A `Map` kept in recency order (a written key moves to the end), with the two
 * resumable walks every in-process store needs: an incremental sweep (a few
 * entries per decision, never a pass over everything) and oldest-first
 * eviction for a hard size cap. Used by `MemoryStore`'s shards and by
 * `TwoTierStore`'s key table.
 *
 * Every insertion goes through {@link set}, so the cursors hear of it (see
 * {@link MapCursor} for why they must).
 *
 * For custom stores: exported by `nestjs-holdup/store`, which may change in a 0.x minor version.
 */
export class SweptMap<K, V> {
  readonly entries = new Map<K, V>();
  /**
   * Only ever advanced by eviction, so its next live entry is the least
   * recently written one not yet examined (an evictor may hold entries it
   * passed over: `BucketShard`). A fresh `keys()` per
   * eviction would walk the deleted slots V8 keeps until the next rehash.
   */
  private readonly evictionCursor = new MapCursor(this.entries);
  private readonly sweepCursor = new MapCursor(this.entries);

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Store `value` for `key`, moving it to the most recent end. True when the key is new. */
  set(key: K, value: V): boolean {
    const existed = this.entries.delete(key);
    this.entries.set(key, value);
    this.evictionCursor.inserted();
    this.sweepCursor.inserted();
    return !existed;
  }

  /** Store `value` for a `key` known to be absent (one hash operation fewer than {@link set}). */
  add(key: K, value: V): void {
    this.entries.set(key, value);
    this.evictionCursor.inserted();
    this.sweepCursor.inserted();
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** The next key of the sweep, or `undefined` at the end of a pass (the next call starts a new one). */
  nextToSweep(): K | undefined {
    return this.sweepCursor.next();
  }

  /** The least recently written key not yet returned (not removed), or `undefined` when empty. */
  oldest(): K | undefined {
    // At the end of a pass, the next step starts over from the oldest entry.
    return this.evictionCursor.next() ?? this.evictionCursor.next();
  }

  clear(): void {
    this.entries.clear();
    this.evictionCursor.restart();
    this.sweepCursor.restart();
  }
}
