/**
 * A fleet of TwoTierStores across a Redis restart that loses the buckets
 * while the instances hold leases and remember their buckets' epoch
 * (`scripts/fleet.lua.ts`, `fleet-share.ts`): the first instance back takes
 * the bucket as empty, not full (the tokens it had were leased or spent
 * before the loss), and only once. A real redis-server of its own, killed
 * and started again (`fault` project). Time: each request's `now` and a
 * manual store clock (leases never expire here); nothing is timed.
 */
import type { TokenBucketCheck } from '../../lib/store/rate-limit-store.interface.js';
import { RedisStore } from '../redis/index.js';
import { redisKey } from '../redis/redis-keys.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS, ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
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

  it('re-creates a lost bucket empty and its paces as held, once, and the fleet stays within the rate', async () => {
    const prefix = uniquePrefix('fleet-restart');
    const clock = { now: () => 0 };
    const fleet = ['a', 'b'].map(
      () =>
        new TwoTierStore({
          client: redis.client,
          keyPrefix: prefix,
          ...ON_TEST_CLOCK,
          // Every call here is meant to be answered: none is in flight across the kill (below).
          timeoutMs: ANSWERED_DEADLINE_MS,
          instances: 2,
          clock,
        }),
    );
    const plain = new RedisStore({
      client: redis.client,
      keyPrefix: prefix,
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
    });
    const hot: TokenBucketCheck = check('hot', 1_000, 1_000); // 1 token a ms
    const fleetKey = `${redisKey(prefix, 'hot')}:fleet`;
    const remaining = async (now: number) =>
      (await plain.peek({ checks: [bucket('hot', 1_000, 1_000)], now })).decisions[0]!.remaining;
    /** What the fleet set holds for a lost state's paces ('^<rate>'), 0 for none. */
    const learning = async () => {
      const member = (await redis.client.zrange(fleetKey, '0', '-1')).find((m) =>
        m.startsWith('^'),
      );
      return member === undefined ? 0 : Number(member.slice(1));
    };
    /** Two requests a ms from `store` from `now` on until one needs Redis: its time and answer. */
    const untilRedisAnswers = async (store: TwoTierStore, now: number) => {
      for (let t = now; t < now + 1_000; t++)
        for (let i = 0; i < 2; i++) {
          const answer = store.consume({ checks: [hot], now: t });
          if (answer instanceof Promise) return { t, answer: await answer };
        }
      throw new Error('no Redis call in 1,000 ms');
    };
    try {
      // Both instances take the key hot, 2,000 requests/s each: each holds a pace (and the
      // bucket's epoch), half the rate by the end.
      for (let i = 0; i < 800; i++)
        for (const store of fleet)
          for (let j = 0; j < 2; j++) await store.consume({ checks: [hot], now: T0 + i });
      for (const store of fleet) expect(store.stats().leasesTaken).toBeGreaterThan(0);
      // A pace renewal goes out with no request waiting for it (one was in flight here in every
      // run): let it be answered before the kill. The stores share this client's connection, so a
      // PING sent after it is answered after it; a turn of the event loop runs what follows.
      await redis.client.ping();
      await new Promise((resolve) => setImmediate(resolve));

      await redis.server.kill();
      await redis.server.restart();
      await until(() => redis.client.status === 'ready');
      expect(await redis.client.exists(redisKey(prefix, 'hot'))).toBe(0); // the state is gone

      // a renews its pace: the state it held against is gone. The bucket is re-created empty,
      // and b's pace, unknown now, is taken to hold the rest of the rate.
      const first = await untilRedisAnswers(fleet[0]!, T0 + 800);
      expect(await remaining(first.t)).toBe(0); // a restart without epochs: full
      const held = await learning();
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThan(1_000);
      // b renews, telling the pace it held: it takes its part back, and nothing is reset again.
      const second = await untilRedisAnswers(fleet[1]!, first.t);
      expect(await learning()).toBeLessThan(held);
      expect(await remaining(second.t)).toBeLessThan(second.t - first.t + 1);

      // Never over the rate meanwhile: 2,000 requests/s from each, for half a second.
      let admitted = 0;
      const from = second.t;
      for (let t = from; t < from + 500; t++)
        for (const store of fleet)
          for (let i = 0; i < 2; i++)
            if ((await store.consume({ checks: [hot], now: t })).allowed) admitted++;
      // The rate, plus what each could hold when the half second began (a pace's tokens due, a lease).
      expect(admitted).toBeLessThanOrEqual(500 + 2 * 64);
      expect(admitted).toBeGreaterThan(300);
    } finally {
      for (const store of fleet) await store.close();
      plain.close();
    }
  });
});
