/**
 * A fleet of TwoTierStores across a Redis restart that loses the buckets
 * while the instances hold leases and remember their buckets' epoch
 * (`scripts/fleet.lua.ts`, `fleet-share.ts`): the first instance back takes
 * the bucket as empty, not full (the tokens it had were leased or spent
 * before the loss), and only once. A real redis-server of its own, killed
 * and started again (`fault` project). Time: each request's `now` and a
 * manual store clock (leases never expire here); nothing is timed.
 */
import type {
  ConsumeResult,
  TokenBucketCheck,
} from '../../lib/store/rate-limit-store.interface.js';
import { RedisStore } from '../redis/index.js';
import { redisKey } from '../redis/redis-keys.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { RECOMMENDED_OPTIONS } from '../../test/utils/redis-client.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { until } from '../../test/utils/time.js';
import { bucket, check } from '../../test/utils/checks.js';
import { TwoTierStore } from './index.js';

const T0 = 1_700_000_000_000;

describe('TwoTierStore fleet across a Redis restart (state lost)', () => {
  const redis = withRedisServer({
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 20 },
    quietErrors: true,
  });

  it('re-creates a lost bucket empty under the instance that held a lease on it, once, and the fleet goes on', async () => {
    const prefix = uniquePrefix('fleet-restart');
    const clock = { now: () => 0 };
    const fleet = ['a', 'b'].map(
      () =>
        new TwoTierStore({
          client: redis.client,
          keyPrefix: prefix,
          time: 'client',
          timeoutMs: 2_000,
          instances: 2,
          clock,
        }),
    );
    const plain = new RedisStore({ client: redis.client, keyPrefix: prefix, time: 'client' });
    const hot: TokenBucketCheck = check('hot', 1_000, 1_000); // 1 token a ms
    const remaining = async (now: number) =>
      (await plain.peek({ checks: [bucket('hot', 1_000, 1_000)], now })).decisions[0]!.remaining;
    /** Requests at `now` until one needs Redis: that one's answer. */
    const untilRedisAnswers = async (store: TwoTierStore, now: number): Promise<ConsumeResult> => {
      for (let i = 0; i < 1_000; i++) {
        const answer = store.consume({ checks: [hot], now });
        if (answer instanceof Promise) return answer;
      }
      throw new Error('no Redis call in 1,000 requests');
    };
    try {
      // Both instances take the key hot and lease it (each learns the bucket's epoch).
      for (let i = 0; i < 60; i++)
        for (const store of fleet) await store.consume({ checks: [hot], now: T0 + i });
      for (const store of fleet) expect(store.stats().leasesTaken).toBeGreaterThan(0);

      await redis.server.kill();
      await redis.server.restart();
      await until(() => redis.client.status === 'ready');
      expect(await redis.client.exists(redisKey(prefix, 'hot'))).toBe(0); // the state is gone

      // a spends its lease, then asks Redis: the bucket it leased against is gone, so it is empty now.
      const lost = await untilRedisAnswers(fleet[0]!, T0 + 100);
      expect(lost.allowed).toBe(false);
      expect(await remaining(T0 + 100)).toBe(0); // a restart without epochs: 1,000 (full)
      // b, telling the epoch from before the restart, 50 ms later: the bucket refilled 50, no second reset.
      const after = await untilRedisAnswers(fleet[1]!, T0 + 150);
      expect(after.allowed).toBe(true);
      expect(await remaining(T0 + 150)).toBeLessThan(50);
    } finally {
      for (const store of fleet) await store.close();
      plain.close();
    }
  });
});
