import { Redis } from 'ioredis';
import { sharedRedisUrl } from './redis-harness.js';

/**
 * A connected ioredis client on the harness' shared server, as the stores
 * want one: no offline queue (a decision must never be replayed later).
 */
export async function connectSharedClient(): Promise<Redis> {
  const client = new Redis(sharedRedisUrl(), { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
  await client.connect();
  return client;
}
