/** One counted item of a {@link SpaceSaving} summary. */
export interface CountedItem {
  readonly item: string;
  /** An upper bound of the item's true count. */
  readonly count: number;
  /** How much of `count` may belong to items it replaced: the true count is in `[count - overcount, count]`. */
  readonly overcount: number;
}

/**
 * Space-saving (Metwally, Agrawal, El Abbadi, 2005): the heavy hitters of a
 * stream in fixed memory. At most `capacity` items are counted; a new item
 * takes the place of the least counted one and inherits its count (as its
 * overcount). Every item whose true count exceeds total/capacity is in the
 * summary, and no count is ever under its true value.
 *
 * The least counted item is found with a binary min-heap over the counters
 * (positions kept in the entries), so an update costs O(log capacity) and a
 * flood of distinct items costs no more than a few of them.
 */
export class SpaceSaving {
  private readonly entries = new Map<string, HeapEntry>();
  /** Min-heap of the entries by count. */
  private readonly heap: HeapEntry[] = [];

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.heap.length;
  }

  /**
   * The most an item missing from the summary can have been counted: 0
   * until the summary is full, then the least count in it.
   */
  get uncountedBound(): number {
    return this.heap.length < this.capacity ? 0 : this.heap[0]!.count;
  }

  add(item: string, weight = 1): void {
    const entry = this.entries.get(item);
    if (entry !== undefined) {
      entry.count += weight;
      this.siftDown(entry.position);
      return;
    }
    if (this.heap.length < this.capacity) {
      const added: HeapEntry = { item, count: weight, overcount: 0, position: this.heap.length };
      this.heap.push(added);
      this.entries.set(item, added);
      this.siftUp(added.position);
      return;
    }
    const least = this.heap[0]!;
    this.entries.delete(least.item);
    least.overcount = least.count;
    least.count += weight;
    least.item = item;
    this.entries.set(item, least);
    this.siftDown(0);
  }

  /** The `top` most counted items, most counted first (ties by name, for a stable order). */
  top(top = this.capacity): CountedItem[] {
    return this.heap
      .map(({ item, count, overcount }) => ({ item, count, overcount }))
      .sort((a, b) => b.count - a.count || (a.item < b.item ? -1 : a.item > b.item ? 1 : 0))
      .slice(0, top);
  }

  clear(): void {
    this.entries.clear();
    this.heap.length = 0;
  }

  private siftUp(at: number): void {
    const { heap } = this;
    const entry = heap[at]!;
    while (at > 0) {
      const parentAt = (at - 1) >> 1;
      const parent = heap[parentAt]!;
      if (parent.count <= entry.count) break;
      heap[at] = parent;
      parent.position = at;
      at = parentAt;
    }
    heap[at] = entry;
    entry.position = at;
  }

  private siftDown(at: number): void {
    const { heap } = this;
    const entry = heap[at]!;
    for (;;) {
      let childAt = 2 * at + 1;
      if (childAt >= heap.length) break;
      if (childAt + 1 < heap.length && heap[childAt + 1]!.count < heap[childAt]!.count) childAt++;
      const child = heap[childAt]!;
      if (child.count >= entry.count) break;
      heap[at] = child;
      child.position = at;
      at = childAt;
    }
    heap[at] = entry;
    entry.position = at;
  }
}

interface HeapEntry {
  item: string;
  count: number;
  overcount: number;
  position: number;
}
