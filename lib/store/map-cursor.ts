/**
 * A resumable walk over a `Map`'s keys in insertion order, for incremental
 * sweeps and oldest-first eviction, that never pins the map's old tables.
 *
 * Why not keep a plain iterator: V8 keeps every hash table a `Map` outgrows
 * or rehashes alive for as long as an iterator created on it has not moved
 * on (the iterator needs it to find its place in the new table). An iterator
 * left idle while the map churns (`delete` + `set` on every charge) pins one
 * more table per rehash, without bound: a `MemoryStore` of 100k live keys
 * grew by about 68 MB of heap per million charges that way.
 *
 * So an idle cursor lets go of its iterator once the map has taken as many
 * insertions as it holds entries (by then it has been rehashed at least once
 * or is about to be), and the next step starts a new pass from the oldest
 * entry. Deleted entries are never returned again either way: a new pass
 * only meets what is still in the map.
 *
 * @internal
 */
export class MapCursor<K> {
  private iterator: Iterator<K> | undefined;
  private insertionsWhileIdle = 0;

  constructor(private readonly map: Map<K, unknown>) {}

  /**
   * The next key of the current pass, or `undefined` when the pass is over
   * (the call after that starts a new pass from the oldest entry).
   */
  next(): K | undefined {
    this.insertionsWhileIdle = 0;
    const iterator = (this.iterator ??= this.map.keys());
    const step = iterator.next();
    if (step.done) {
      this.iterator = undefined;
      return undefined;
    }
    return step.value;
  }

  /** To be called on every insertion into the map (a `set` of a new or re-inserted key). */
  inserted(): void {
    if (this.iterator !== undefined && ++this.insertionsWhileIdle > this.map.size)
      this.iterator = undefined;
  }

  /** Forget the position: the next step starts a new pass. */
  restart(): void {
    this.iterator = undefined;
  }
}
