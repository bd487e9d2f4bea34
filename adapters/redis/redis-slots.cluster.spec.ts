import { redisClusterFixture } from '../../test/utils/redis-cluster-fixture.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { RedisStore } from './index.js';
import { keySlot, redisKey } from './redis-keys.js';

/**
 * Concurrency slots on a Redis Cluster (3 masters): one key per script call,
 * so keys in different hash slots each live and decide on their own node.
 */
describe('RedisStore slots on a Redis Cluster (3 masters)', () => {
  const redis = redisClusterFixture();

  it('acquire, refuse, release and count on keys spread over the slots', async () => {
    const keyPrefix = uniquePrefix('cluster-slots');
    const store = new RedisStore({ client: redis.client, keyPrefix, timeoutMs: 5_000 });
    const keys = Array.from({ length: 12 }, (_, i) => `cc|gen|r1|k=${i}`);
    // The keys are spread over several hash slots (and so over the nodes).
    expect(new Set(keys.map((key) => keySlot(redisKey(keyPrefix, key)))).size).toBeGreaterThan(3);
    for (const key of keys) {
      expect(
        await store.slots.acquire({ key, limit: 2, id: 'a', leaseMs: 10_000, now: 0 }),
      ).toEqual({ allowed: true, inFlight: 1 });
      expect(
        await store.slots.acquire({ key, limit: 2, id: 'b', leaseMs: 10_000, now: 0 }),
      ).toEqual({ allowed: true, inFlight: 2 });
      expect(
        await store.slots.acquire({ key, limit: 2, id: 'c', leaseMs: 10_000, now: 0 }),
      ).toEqual({ allowed: false, inFlight: 2 });
    }
    for (const key of keys) await store.slots.release({ key, id: 'a', now: 0 });
    expect(await Promise.all(keys.map((key) => store.slots.inFlight(key)))).toEqual(
      keys.map(() => 1),
    );
    store.close();
  });
});
