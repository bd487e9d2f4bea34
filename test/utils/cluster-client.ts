import { Cluster } from 'ioredis';
import type { RedisClusterHandle } from './redis-harness.js';

/** An ioredis Cluster client on the harness' cluster, once it is ready. */
export async function connectClusterClient(cluster: RedisClusterHandle): Promise<Cluster> {
  const client = new Cluster([...cluster.startupNodes], {
    enableOfflineQueue: true, // only until ready; the store itself never sends while not ready
    redisOptions: { maxRetriesPerRequest: 1 },
  });
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve());
    client.once('error', reject);
  });
  return client;
}
