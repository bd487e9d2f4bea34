import { keySlot, redisKey } from '../../adapters/redis/redis-keys.js';

/** `count` bucket keys whose Redis keys (under `prefix`) fall in distinct Cluster slots, in ascending slot order. */
export function keysInDistinctSlots(prefix: string, count: number): string[] {
  const bySlot = new Map<number, string>();
  for (let i = 0; bySlot.size < count; i++) {
    const key = `k${i}`;
    const slot = keySlot(redisKey(prefix, key));
    if (!bySlot.has(slot)) bySlot.set(slot, key);
  }
  return [...bySlot].sort(([a], [b]) => a - b).map(([, key]) => key);
}
