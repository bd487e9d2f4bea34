import { keySlot } from './redis-keys.js';

/** The keys of one request that share a Cluster slot: indexes into the request. */
export interface SlotGroup {
  readonly slot: number;
  readonly indexes: number[];
}

/**
 * The request's keys grouped by Cluster slot, in ascending slot order (the
 * order the multi-slot protocol visits them in), each group's indexes in
 * request order. The one grouping of the store: consume, lease, peek, refund
 * and reset all use it.
 */
export function groupBySlot(keys: readonly string[]): SlotGroup[] {
  const bySlot = new Map<number, number[]>();
  for (let i = 0; i < keys.length; i++) {
    const slot = keySlot(keys[i]!);
    const indexes = bySlot.get(slot);
    if (indexes) indexes.push(i);
    else bySlot.set(slot, [i]);
  }
  return [...bySlot].map(([slot, indexes]) => ({ slot, indexes })).sort((a, b) => a.slot - b.slot);
}

/** The items of one group, in request order. */
export function pick<T>(items: readonly T[], group: SlotGroup): T[] {
  return group.indexes.map((index) => items[index]!);
}

/** Puts one group's answers (in group order) back at their places in the request. */
export function place<T>(into: T[], group: SlotGroup, values: readonly T[]): void {
  group.indexes.forEach((index, i) => {
    into[index] = values[i]!;
  });
}
