import type { Redis } from 'ioredis';
import { RelativeTime } from '../../lib/store/relative-time.js';
import { check } from '../../test/utils/checks.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS, ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { RedisStore } from '../redis/index.js';
import { GiveBackQueue } from './give-back-queue.js';

const T0 = 1_700_000_000_000;

describe('GiveBackQueue (real Redis)', () => {
  let client: Redis;
  let redis: RedisStore;
  let time: RelativeTime;
  const fallback = { degraded: false };

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(async () => {
    await client.quit();
  });
  beforeEach(() => {
    redis = new RedisStore({ client, keyPrefix: uniquePrefix('give-back'), ...ON_TEST_CLOCK });
    time = new RelativeTime();
    time.relative(T0);
    fallback.degraded = false;
  });

  const remaining = async (key: string) =>
    (await redis.peek({ checks: [check(key, 10, 100)], now: T0 })).decisions[0]!.remaining;

  it('sends what is queued at the next microtask, in one call, and the Redis buckets get the tokens back', async () => {
    await redis.consume({ checks: [check('a', 10, 100, 30), check('b', 10, 100, 30)], now: T0 });
    const queue = new GiveBackQueue(redis, time, fallback);
    queue.add('a', 10, 100, 10);
    queue.add('b', 10, 100, 2.5);
    expect(queue.calls).toBe(0);
    await Promise.resolve();
    expect(queue.calls).toBe(1);
    await queue.settled();
    expect(queue).toMatchObject({ calls: 1, returned: 2, returnedTokens: 12.5, lostTokens: 0 });
    expect(await remaining('a')).toBe(80);
    expect(await remaining('b')).toBe(72);
  });

  it('sends at once when flushed (before a call of the store that must not count the tokens as taken)', async () => {
    await redis.consume({ checks: [check('a', 10, 100, 30)], now: T0 });
    const queue = new GiveBackQueue(redis, time, fallback);
    queue.add('a', 10, 100, 10);
    queue.flush();
    expect(queue.calls).toBe(1);
    // Same connection: anything sent now is decided after the give-back.
    expect(await remaining('a')).toBe(80);
    await queue.settled();
    await Promise.resolve();
    expect(queue.calls).toBe(1); // the scheduled flush found nothing left
  });

  it('batches 64 keys per call', async () => {
    const queue = new GiveBackQueue(redis, time, fallback);
    for (let i = 0; i < 100; i++) queue.add(`k${i}`, 10, 100, 1);
    queue.flush();
    await queue.settled();
    expect(queue).toMatchObject({ calls: 2, returned: 100, returnedTokens: 100 });
  });

  it('drops a share of a token or less', async () => {
    const queue = new GiveBackQueue(redis, time, fallback);
    queue.add('a', 10, 100, 1e-10);
    queue.add('a', 10, 100, 0);
    queue.flush();
    expect(queue).toMatchObject({ calls: 0, lostTokens: 0 });
  });

  it('counts tokens as lost while the store runs on its fallback, or when it switches to it', async () => {
    const queue = new GiveBackQueue(redis, time, fallback);
    queue.add('a', 10, 100, 3);
    fallback.degraded = true;
    queue.loseQueued();
    queue.add('b', 10, 100, 2);
    queue.flush();
    await queue.settled();
    expect(queue).toMatchObject({ calls: 0, returned: 0, lostTokens: 5 });
  });

  it('counts the tokens of a give-back Redis refused as lost, and never rejects', async () => {
    const closed = new RedisStore({
      client,
      keyPrefix: uniquePrefix('give-back'),
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
    });
    closed.close();
    const queue = new GiveBackQueue(closed, time, fallback);
    queue.add('a', 10, 100, 4);
    queue.flush();
    await expect(queue.settled()).resolves.toBeDefined();
    expect(queue).toMatchObject({ calls: 1, returned: 0, returnedTokens: 0, lostTokens: 4 });
  });
});
