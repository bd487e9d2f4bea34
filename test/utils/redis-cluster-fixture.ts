import type { Cluster } from 'ioredis';
import { connectClusterClient } from './redis-client.js';
import { startRedisCluster, type RedisClusterHandle } from './redis-harness.js';

/** What {@link redisClusterFixture} gives a spec file or describe block. */
export interface RedisClusterFixture {
  /** The cluster (3 masters), from `beforeAll` on. */
  readonly cluster: RedisClusterHandle;
  /** A client on it, from `beforeAll` on. */
  readonly client: Cluster;
}

/**
 * One Redis Cluster (3 masters, `startRedisCluster`) and a client on it for
 * the enclosing block: started in `beforeAll`, stopped in `afterAll`. For the
 * `fault` project's `*.cluster.spec.ts` files.
 */
export function redisClusterFixture(): RedisClusterFixture {
  let cluster: RedisClusterHandle | undefined;
  let client: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = await connectClusterClient(cluster);
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });
  return {
    get cluster() {
      if (cluster === undefined)
        throw new Error('redisClusterFixture: no cluster before beforeAll');
      return cluster;
    },
    get client() {
      if (client === undefined) throw new Error('redisClusterFixture: no client before beforeAll');
      return client;
    },
  };
}
