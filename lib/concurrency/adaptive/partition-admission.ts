/**
 * Priorities within one adaptive limit: each partition is guaranteed its
 * share of the limit (rounded down), and may borrow what the others leave
 * unused, except the guarantees of partitions seen lately
 * (`activeSince`): a partition idle that long lends its share, one with
 * callers keeps it free for them. So under overload a partition beyond its
 * share (the lower one, in practice) is refused first, and an idle
 * partition's share is not wasted.
 *
 * Pure: the counts in, the answer out.
 */

export interface PartitionCounts {
  /** The limit in force. */
  readonly limit: number;
  /** Calls of the key in flight, every partition. */
  readonly inFlight: number;
  /** Calls in flight per partition, in declaration order. */
  readonly byPartition: readonly number[];
  /** Shares, in declaration order (each in (0, 1], summing to at most 1). */
  readonly shares: readonly number[];
  /** Whether each partition had a caller lately: only those keep their guarantee free. */
  readonly active: readonly boolean[];
}

/** The slots guaranteed to partition `index` at this limit. */
export function guaranteed(limit: number, share: number): number {
  return Math.floor(limit * share);
}

/** Whether a call of partition `index` may take a slot now. */
export function admits(counts: PartitionCounts, index: number): boolean {
  if (counts.inFlight >= counts.limit) return false;
  if (counts.shares.length === 0) return true;
  if (counts.byPartition[index]! < guaranteed(counts.limit, counts.shares[index]!)) return true;
  // Borrowing: what is free beyond the unused guarantees of the other active partitions.
  let kept = 0;
  for (let i = 0; i < counts.shares.length; i++) {
    if (i === index || !counts.active[i]) continue;
    kept += Math.max(0, guaranteed(counts.limit, counts.shares[i]!) - counts.byPartition[i]!);
  }
  return counts.limit - counts.inFlight > kept;
}
