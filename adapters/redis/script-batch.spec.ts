/**
 * Concurrent one-bucket consumes in one script call (`script-batch.ts`,
 * `scripts/consume-batch.lua.ts`) on ioredis' standalone client, against a
 * server of its own (the tests count the commands it ran): each call decided
 * as if it were its own, its error its own, a lone call never held.
 */
import type { Redis } from 'ioredis';
import { connectRedisClient, RECOMMENDED_OPTIONS } from '../../test/utils/redis-client.js';
import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type { ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import { check } from '../../test/utils/checks.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { RedisStore } from './index.js';
import { redisKey } from './redis-keys.js';
import { SCRIPTS } from './scripts/index.js';

/** Script calls the server ran since the last `CONFIG RESETSTAT`, by command. */
async function scriptCalls(client: Redis): Promise<{ evalsha: number; eval: number }> {
  const info = await client.info('commandstats');
  const calls = (name: string) =>
    Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { evalsha: calls('evalsha'), eval: calls('eval') };
}

const remaining = (result: ConsumeResult) => result.decisions[0]!.remaining;

describe('RedisStore: concurrent one-bucket consumes in one script call', () => {
  const redis = withRedisServer();
  const stores: RedisStore[] = [];
  const open = (time: 'client' | 'server' = 'client') => {
    const store = new RedisStore({
      client: redis.client,
      keyPrefix: uniquePrefix('batch'),
      ...ON_TEST_CLOCK,
      time,
    });
    stores.push(store);
    return store;
  };
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
  });

  it('sends the calls made while one awaits its reply as one script call, each answered as if alone', async () => {
    const store = open();
    for (const script of [SCRIPTS.consume_one, SCRIPTS.consume_batch])
      await redis.client.script('LOAD', script.source);
    await redis.client.config('RESETSTAT');
    // The first leaves at once; the nine made behind it go in one batch.
    const calls = Array.from({ length: 10 }, (_, i) =>
      store.consume({ checks: [check(`k${i % 3}`, 10, 4)], now: 1_000 }),
    );
    const results = await Promise.all(calls);
    expect(await scriptCalls(redis.client)).toEqual({ evalsha: 2, eval: 0 });
    // k0 charged 4 times (calls 0, 3, 6, 9), k1 and k2 3 times: in call order, as one at a time.
    expect(results.map(remaining)).toEqual([3, 3, 3, 2, 2, 2, 1, 1, 1, 0]);
    expect(results.every((result) => result.allowed)).toBe(true);
    const denied = await Promise.all([
      store.consume({ checks: [check('k0', 10, 4)], now: 1_000 }),
      store.consume({ checks: [check('k0', 10, 4)], now: 1_000 }),
    ]);
    expect(denied.map((result) => result.decisions[0])).toEqual([
      { allowed: false, remaining: 0, retryAfterMs: 100, resetMs: 400, reason: 'limit' },
      { allowed: false, remaining: 0, retryAfterMs: 100, resetMs: 400, reason: 'limit' },
    ]);
  });

  it('answers what the calls answer one at a time, decision for decision (server time too)', async () => {
    for (const time of ['client', 'server'] as const) {
      const together = open(time);
      const alone = open(time);
      const requests = Array.from({ length: 12 }, (_, i) =>
        check(`k${i % 2}`, 1e-3, 5, 1 + (i % 3)),
      );
      const batched = await Promise.all(
        requests.map((request) => together.consume({ checks: [request], now: 5_000.25 })),
      );
      const sequential: ConsumeResult[] = [];
      for (const request of requests)
        sequential.push(await alone.consume({ checks: [request], now: 5_000.25 }));
      if (time === 'client') expect(batched).toEqual(sequential);
      // Server time: the clock moves between the sequential calls; the decisions' shape still agrees.
      else expect(batched.map((r) => r.allowed)).toEqual(sequential.map((r) => r.allowed));
    }
  });

  it('never holds a lone call: one request at a time never sends the batch script', async () => {
    const store = open();
    await redis.client.script('FLUSH');
    await redis.client.config('RESETSTAT');
    for (let i = 0; i < 3; i++)
      expect((await store.consume({ checks: [check(`lone${i}`, 10, 4)], now: 0 })).allowed).toBe(
        true,
      );
    expect(await redis.client.script('EXISTS', SCRIPTS.consume_batch.sha)).toEqual([0]);
    expect(await scriptCalls(redis.client)).toEqual({ evalsha: 3, eval: 1 });
  });

  it('sends a burst (the calls made as batches are answered) in halves, not whole: Redis runs one while Node makes the other', async () => {
    const client = await connectRedisClient(redis.server.url, RECOMMENDED_OPTIONS);
    try {
      const store = new RedisStore({
        client,
        keyPrefix: uniquePrefix('batch-burst'),
        ...ON_TEST_CLOCK,
      });
      stores.push(store);
      for (const script of [SCRIPTS.consume_one, SCRIPTS.consume_batch])
        await client.script('LOAD', script.source);
      // Calls per script call (EVALSHA's numkeys), in the order the store sent them.
      const sizes: number[] = [];
      const send = client.sendCommand.bind(client);
      client.sendCommand = ((command: { name: string; args: unknown[] }) => {
        if (command.name === 'evalsha') sizes.push(Number(command.args[1]));
        return send(command as Parameters<typeof send>[0]);
      }) as typeof client.sendCommand;
      // 16 requests in flight: each calls again as soon as its first call is answered.
      const twice = (i: number) =>
        store
          .consume({ checks: [check(`b${i}`, 10, 4)], now: 0 })
          .then(() => store.consume({ checks: [check(`b${i}`, 10, 4)], now: 0 }));
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => twice(i)));
      expect(results.map(remaining)).toEqual(Array.from({ length: 16 }, () => 2));
      // From an idle connection: the lone call, then the fifteen made behind it.
      expect(sizes.slice(0, 2)).toEqual([1, 15]);
      // Made as those were answered: the sixteen again, in halves (sent whole: 15 or 16 in one).
      const burst = sizes.slice(2);
      expect(burst.reduce((sum, size) => sum + size, 0)).toBe(16);
      expect(Math.max(...burst)).toBeLessThanOrEqual(8);
    } finally {
      client.disconnect();
    }
  });

  it("keeps a call's error its own: a key holding another type fails its call alone, and nothing is charged twice", async () => {
    const store = open();
    const prefix = uniquePrefix('batch-wrongtype');
    const typed = new RedisStore({ client: redis.client, keyPrefix: prefix, ...ON_TEST_CLOCK });
    stores.push(typed);
    await redis.client.hset(redisKey(prefix, 'bad'), 'field', '1');
    const lead = store.consume({ checks: [check('lead', 10, 4)], now: 0 });
    const good = typed.consume({ checks: [check('good', 10, 4)], now: 0 });
    const bad = typed.consume({ checks: [check('bad', 10, 4)], now: 0 });
    const after = typed.consume({ checks: [check('good', 10, 4)], now: 0 });
    const failure = await bad.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RateLimitStoreError);
    expect((failure as Error).message).toMatch(/WRONGTYPE/);
    expect((await lead).allowed).toBe(true);
    expect([remaining(await good), remaining(await after)]).toEqual([3, 2]);
    expect(await redis.client.hget(redisKey(prefix, 'bad'), 'field')).toBe('1');
    expect(store.errors + typed.errors).toBe(1);
  });

  it('reloads the batch script after SCRIPT FLUSH (NOSCRIPT answered with EVAL)', async () => {
    const store = open();
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        store.consume({ checks: [check(`n${i}`, 10, 4)], now: 0 }),
      ),
    );
    await redis.client.script('FLUSH');
    const reloads = store.scriptReloads;
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        store.consume({ checks: [check(`n${i}`, 10, 4)], now: 0 }),
      ),
    );
    expect(results.map(remaining)).toEqual([2, 2, 2, 2]);
    expect(store.scriptReloads - reloads).toBe(2); // consume_one (the first), consume_batch (the rest)
  });

  it('puts calls of different client clock readings in different batches, each at its own time', async () => {
    const store = open();
    await redis.client.config('RESETSTAT');
    const results = await Promise.all([
      store.consume({ checks: [check('t', 10, 2)], now: 0 }),
      store.consume({ checks: [check('t', 10, 2)], now: 0 }),
      store.consume({ checks: [check('t', 10, 2)], now: 0 }),
      store.consume({ checks: [check('t', 10, 2)], now: 100 }),
      store.consume({ checks: [check('t', 10, 2)], now: 100 }),
    ]);
    // At 0: two admitted, the third denied; at 100 ms one token is back: one admitted.
    expect(results.map((result) => result.allowed)).toEqual([true, true, false, true, false]);
    // The lone first, then a batch at 0 (two calls) and one at 100 (two calls).
    const calls = await scriptCalls(redis.client);
    expect(calls.evalsha).toBe(3);
  });

  it('keeps the order of the calls: a peek or a reset made after queued consumes reaches Redis after them', async () => {
    const store = open();
    // Loaded beforehand: a NOSCRIPT's EVAL would go after whatever was sent meanwhile.
    for (const script of [SCRIPTS.consume_one, SCRIPTS.consume_batch, SCRIPTS.peek])
      await redis.client.script('LOAD', script.source);
    const lead = store.consume({ checks: [check('lead', 10, 4)], now: 0 });
    const consumed = store.consume({ checks: [check('o', 10, 4)], now: 0 });
    const peeked = store.peek({ checks: [check('o', 10, 4)], now: 0 });
    const again = store.consume({ checks: [check('o', 10, 4)], now: 0 });
    const reset = store.reset({ checks: [check('o', 10, 4)], now: 0 });
    const after = store.peek({ checks: [check('o', 10, 4)], now: 0 });
    await Promise.all([lead, reset]);
    expect(remaining(await consumed)).toBe(3);
    expect(remaining(await peeked)).toBe(3);
    expect(remaining(await again)).toBe(2);
    expect(remaining(await after)).toBe(4);
  });

  it("keeps the client's keyPrefix on every key of a batch, as its evalsha would", async () => {
    const clientPrefix = uniquePrefix('batch-client-prefix');
    const prefixed = await connectRedisClient(redis.server.url, {
      ...RECOMMENDED_OPTIONS,
      keyPrefix: clientPrefix,
    });
    try {
      const keyPrefix = uniquePrefix('batch-prefix');
      const store = new RedisStore({
        client: prefixed,
        keyPrefix,
        time: 'client',
        timeoutMs: 5_000,
      });
      stores.push(store);
      await redis.client.config('RESETSTAT');
      const results = await Promise.all(
        ['a', 'b', 'c'].map((key) => store.consume({ checks: [check(key, 0.001, 4)], now: 0 })),
      );
      expect(results.map(remaining)).toEqual([3, 3, 3]);
      expect((await scriptCalls(redis.client)).evalsha).toBe(2); // the lone first, then a batch of two
      for (const key of ['a', 'b', 'c']) {
        expect(await redis.client.exists(clientPrefix + redisKey(keyPrefix, key))).toBe(1);
        expect(await redis.client.exists(redisKey(keyPrefix, key))).toBe(0);
      }
    } finally {
      prefixed.disconnect();
    }
  });
});
