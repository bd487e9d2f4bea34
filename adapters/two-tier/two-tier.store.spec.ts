import type { Redis } from 'ioredis';
import { ManualClock } from '../../lib/clock.js';
import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type { ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import { approximately } from '../../test/utils/approximately.js';
import { rawCommand, uniquePrefix } from '../../test/utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS, ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { until } from '../../test/utils/time.js';
import { ModelStore } from '../../lib/store/contract/model-store.js';
import { RedisStore } from '../redis/index.js';
import { redisKey } from '../redis/redis-keys.js';
import { TwoTierStore, type TwoTierStoreOptions } from './index.js';
import { bucket, check } from '../../test/utils/checks.js';

const T0 = 1_700_000_000_000;
const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as { then?: unknown })?.then === 'function';

/** Script calls a server ran (EVALSHA + EVAL), from INFO commandstats. */
async function scriptCalls(port: number): Promise<number> {
  const info = await rawCommand(port, ['INFO', 'commandstats']);
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm))
    total += Number(match[2]);
  return total;
}

/** A stored bucket value (`<base>:<offset>`, see adapters/redis/scripts/gcra.lua.ts) as absolute milliseconds. */
function storedTat(value: string | null): number {
  const [base, offset] = String(value).split(':').map(Number) as [number, number];
  return base + offset;
}

describe('TwoTierStore', () => {
  let client: Redis;
  let prefix: string;
  const stores: TwoTierStore[] = [];

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(async () => {
    await client.quit();
  });
  beforeEach(() => {
    prefix = uniquePrefix('two-tier');
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  /** A store on the test's clock ({@link ON_TEST_CLOCK}), closed after the test. */
  const makeStore = (options: Partial<TwoTierStoreOptions> = {}) => {
    const store = new TwoTierStore({ client, keyPrefix: prefix, ...ON_TEST_CLOCK, ...options });
    stores.push(store);
    return store;
  };
  /** The shared bucket as Redis holds it (leases counted as taken). */
  const redisView = (key: string, rate: number, burst: number, now: number) =>
    new RedisStore({
      client,
      keyPrefix: prefix,
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
    }).peek({
      checks: [bucket(key, rate, burst)],
      now,
    });

  it('validates its options, naming them', () => {
    expect(() => new TwoTierStore(undefined as never)).toThrow(/options/);
    expect(() => new TwoTierStore({})).toThrow(/client .* or redis .* is required/);
    expect(() => new TwoTierStore({ client: {} as never })).toThrow(
      /client must be a Redis client/,
    );
    const redis = new RedisStore({ client });
    expect(() => new TwoTierStore({ redis, client })).toThrow(/either client or redis/);
    expect(() => new TwoTierStore({ redis, timeoutMs: 5 })).toThrow(
      /timeoutMs cannot be combined with redis/,
    );
    expect(() => new TwoTierStore({ redis: {} as never })).toThrow(/redis must be a RedisStore/);
    expect(() => new TwoTierStore({ client, instances: 0 })).toThrow(/instances/);
    expect(() => new TwoTierStore({ client, localShare: 0 })).toThrow(/localShare/);
    expect(() => new TwoTierStore({ client, localShare: 1.5 })).toThrow(/localShare/);
    expect(() => new TwoTierStore({ client, leaseTtlMs: 0 })).toThrow(/leaseTtlMs/);
    expect(() => new TwoTierStore({ client, maxLeaseShare: 2 })).toThrow(/maxLeaseShare/);
    expect(() => new TwoTierStore({ client, maxKeys: 0 })).toThrow(/maxKeys/);
    expect(() => new TwoTierStore({ client, probeIntervalMs: -1 })).toThrow(/probeIntervalMs/);
    expect(() => new TwoTierStore({ client, clock: {} as never })).toThrow(/clock/);
    expect(() => new TwoTierStore({ client, keyPrefix: '{x}' })).toThrow(/keyPrefix/);
    expect(new TwoTierStore({ redis }).redisStore).toBe(redis);
    expect(new TwoTierStore({ redis }).localFallback).toMatchObject({ active: false }); // what lets the module accept failMode: 'local'
  });

  it('serves a hot key from leases: synchronous answers, few Redis calls, the algorithm exactly', async () => {
    const clock = new ManualClock(T0); // leases expire on the requests' time, not on a loaded machine's
    const store = makeStore({ clock });
    const model = new ModelStore();
    const c = check('hot', 100, 100);
    let sync = 0;
    for (let i = 0; i < 300; i++) {
      const request = { checks: [c], now: T0 + i * 12 }; // 83/s offered at 100/s: never denied
      clock.set(request.now);
      const answer = store.consume(request);
      if (!isPromise(answer)) sync++;
      expect(await answer).toEqual(approximately(model.consume(request)));
    }
    const stats = store.stats();
    expect(stats.decisions).toBe(300);
    expect(stats.localDecisions).toBe(sync);
    expect(sync).toBeGreaterThan(250);
    expect(stats.redisCalls).toBeLessThanOrEqual(30);
    expect(stats.leasesTaken).toBeGreaterThan(0);
  });

  it('never admits more than the bucket holds, and close to it, at 5x the rate', async () => {
    const clock = new ManualClock(T0); // leases expire on the requests' time, not on a loaded machine's
    const store = makeStore({ clock });
    const c = check('saturated', 100, 100);
    let admitted = 0;
    for (let i = 0; i < 1_000; i++) {
      clock.set(T0 + i * 2);
      if ((await store.consume({ checks: [c], now: T0 + i * 2 })).allowed) admitted++;
    }
    // 2 s at 100/s plus the burst. (Single instance: lease time-shift aside, the model's bound.)
    const bound = Math.floor(100 + 100 * 1.998);
    expect(admitted).toBeLessThanOrEqual(bound);
    expect(admitted).toBeGreaterThanOrEqual(0.9 * bound);
    expect(store.stats().redisCalls / admitted).toBeLessThanOrEqual(0.1);
  });

  // A server of its own: its commandstats count this store's calls alone.
  describe('on a server of its own', () => {
    const redis = withRedisServer();

    it('costs a cold key exactly one Redis call per decision and leaves no lease behind', async () => {
      const server = redis.server;
      const own = redis.client;
      const store = new TwoTierStore({ client: own, keyPrefix: prefix, ...ON_TEST_CLOCK });
      stores.push(store);
      await store.consume({ checks: [check('warm-up', 10, 20)], now: T0 }); // loads the script
      await rawCommand(server.port, ['CONFIG', 'RESETSTAT']);
      const before = store.stats().redisCalls;
      const keys = Array.from({ length: 300 }, (_, i) => `cold:${i}`);
      for (const [i, key] of keys.entries()) {
        const answer = store.consume({ checks: [check(key, 10, 20)], now: T0 + i });
        expect(isPromise(answer)).toBe(true);
        expect(await answer).toEqual({
          allowed: true,
          decisions: [{ allowed: true, remaining: 19, retryAfterMs: 0, resetMs: 100 }],
        });
      }
      expect(store.stats().redisCalls - before).toBe(300);
      expect(await scriptCalls(server.port)).toBe(300);
      // Each bucket holds exactly the one token charged: no extra taken.
      const values = await own.mget(...keys.map((key) => redisKey(prefix, key)));
      values.forEach((value, i) => expect(storedTat(value)).toBeCloseTo(T0 + i + 100, 6));
      expect(store.stats()).toMatchObject({ leasesTaken: 0, leasedTokens: 0 });
      await store.close();
      expect(await scriptCalls(server.port)).toBe(300); // nothing to give back at close
      expect(store.stats()).toMatchObject({ leasesReturned: 0, returnedTokens: 0 });
    });
  });

  it('gives unspent tokens back when the lease expires, leaving Redis as if only the spent ones were taken', async () => {
    const clock = new ManualClock(0);
    const store = makeStore({ clock, leaseTtlMs: 40 });
    const model = new ModelStore();
    const c = check('expiring', 100, 100);
    for (let i = 0; i < 20; i++) {
      const request = { checks: [c], now: T0 + i };
      expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
    }
    const leased = store.stats();
    expect(leased.leasedTokens).toBeGreaterThan(0);
    expect((await redisView('expiring', 100, 100, T0 + 19)).decisions[0]!.remaining).toBeLessThan(
      80,
    );

    clock.advance(40); // the expiry timer (every leaseTtlMs / 2 of real time) gives it back
    await until(() => store.stats().leasesReturned === 1);
    const stats = store.stats();
    expect(stats.leasedTokens - stats.returnedTokens).toBeCloseTo(
      20 - (stats.redisCalls - 1 - stats.leasesTaken) - stats.leasesTaken,
      6,
    );
    expect((await redisView('expiring', 100, 100, T0 + 19)).decisions[0]).toEqual(
      approximately(model.peek({ checks: [c], now: T0 + 19 })).decisions[0],
    );
  });

  it('gives every lease back at close()', async () => {
    const store = makeStore();
    const model = new ModelStore();
    for (let i = 0; i < 30; i++) {
      const request = { checks: [check('a', 100, 100), check('b', 50, 40)], now: T0 + i };
      expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
    }
    expect(store.stats().leasesTaken).toBeGreaterThan(0);
    await store.close();
    const stats = store.stats();
    expect(stats.returnedTokens).toBeCloseTo(
      stats.leasedTokens - (60 - stats.redisCalls - stats.leasesTaken * 0),
      -3,
    );
    for (const [key, rate, burst] of [
      ['a', 100, 100],
      ['b', 50, 40],
    ] as const) {
      expect((await redisView(key, rate, burst, T0 + 29)).decisions[0]).toEqual(
        approximately(model.peek({ checks: [check(key, rate, burst)], now: T0 + 29 })).decisions[0],
      );
    }
    await expect(store.consume({ checks: [check('a', 1, 1)], now: T0 })).rejects.toThrow(
      RateLimitStoreError,
    );
  });

  it('remembers a denial until its retry time, without asking Redis again', async () => {
    const store = makeStore();
    const c = check('denied', 1, 2); // too small a burst to lease
    await store.consume({ checks: [c], now: T0 });
    await store.consume({ checks: [c], now: T0 });
    const denied = await store.consume({ checks: [c], now: T0 + 100 });
    expect(denied.decisions[0]).toEqual({
      allowed: false,
      remaining: 0,
      retryAfterMs: 900,
      resetMs: 1_900,
      reason: 'limit',
    });
    const calls = store.stats().redisCalls;
    for (const at of [100, 400, 999]) {
      const answer = store.consume({ checks: [c], now: T0 + at });
      expect(isPromise(answer)).toBe(false);
      expect((answer as ConsumeResult).decisions[0]).toEqual({
        allowed: false,
        remaining: 0,
        retryAfterMs: 1_000 - at,
        resetMs: 2_000 - at,
        reason: 'limit',
      });
    }
    // A dearer request waits its extra token too; a cheaper one is asked of Redis.
    expect(
      (store.consume({ checks: [{ ...c, cost: 2 }], now: T0 + 500 }) as ConsumeResult).decisions[0]!
        .retryAfterMs,
    ).toBe(1_500);
    expect(store.stats()).toMatchObject({ redisCalls: calls, denyCacheHits: 4 });
    expect(await store.consume({ checks: [{ ...c, cost: 0.5 }], now: T0 + 500 })).toMatchObject({
      allowed: true,
    });
    expect(store.stats().redisCalls).toBe(calls + 1);
    expect(await store.consume({ checks: [c], now: T0 + 1_500 })).toMatchObject({ allowed: true });
  });

  it('keeps a hot key denied until a whole lease has refilled, and says so in retryAfterMs', async () => {
    const store = makeStore();
    const c = check('saturated', 100, 100); // 10 ms per token; leases up to 25
    let now = T0;
    let result: ConsumeResult;
    do {
      result = await store.consume({ checks: [c], now: (now += 1) });
    } while (result.allowed);
    const retryAfterMs = result.decisions[0]!.retryAfterMs;
    // Redis' own answer would be at most one token away: 10 ms.
    expect(retryAfterMs).toBeGreaterThan(100);
    expect(retryAfterMs).toBeLessThanOrEqual(510);
    const calls = store.stats().redisCalls;
    const until = now + retryAfterMs;
    for (let at = now; at < until; at += 7) {
      const answer = store.consume({ checks: [c], now: at }) as ConsumeResult;
      expect(answer.allowed).toBe(false);
      expect(answer.decisions[0]!.retryAfterMs).toBeCloseTo(until - at, 6);
    }
    expect(store.stats().redisCalls).toBe(calls);
    const admitted = await store.consume({ checks: [c], now: until });
    expect(admitted.allowed).toBe(true);
    expect(store.stats().leasedTokens).toBeGreaterThan(25);
    // Nothing was lost while waiting: the tokens were in the Redis bucket.
    expect(admitted.decisions[0]!.remaining).toBeGreaterThanOrEqual(10);
  });

  it('is all or nothing: leased checks are charged only if Redis admits the others', async () => {
    const store = makeStore();
    const model = new ModelStore();
    const wide = check('wide', 100, 100);
    const narrow = check('narrow', 1, 3);
    for (let i = 0; i < 10; i++) {
      const request = { checks: [wide], now: T0 + i };
      expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
    }
    const calls = store.stats().redisCalls;
    for (let i = 0; i < 4; i++) {
      const request = { checks: [wide, narrow], now: T0 + 10 };
      const result = await store.consume(request);
      expect(result).toEqual(approximately(model.consume(request)));
    }
    // narrow: 3 admitted, then denied by Redis: wide (served by its lease) not charged.
    expect(store.stats().redisCalls).toBe(calls + 4);
    // Deny-cached: the whole request is denied without a call, charging nothing.
    const request = { checks: [wide, narrow], now: T0 + 20 };
    const answer = store.consume(request);
    expect(isPromise(answer)).toBe(false);
    expect(answer).toEqual(approximately(model.consume(request)));
    expect(store.stats().redisCalls).toBe(calls + 4);
    const alone = { checks: [wide], now: T0 + 20 };
    expect(await store.consume(alone)).toEqual(approximately(model.consume(alone)));
  });

  it('lets concurrent requests for a key wait for the call in flight instead of calling too', async () => {
    const store = makeStore();
    for (let i = 0; i < 10; i++)
      await store.consume({ checks: [check('burst', 1_000, 1_000)], now: T0 + i });
    // Lease spent: the next call is in flight when 30 more arrive at once.
    await store.consume({ checks: [check('burst', 1_000, 1_000, 600)], now: T0 + 10 });
    const calls = store.stats().redisCalls;
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        store.consume({ checks: [check('burst', 1_000, 1_000)], now: T0 + 11 }),
      ),
    );
    expect(answers.every((answer) => answer.allowed)).toBe(true);
    expect(store.stats().redisCalls - calls).toBeLessThanOrEqual(2);
  });

  it('bounds its local state with maxKeys, giving back the leases of the keys it drops', async () => {
    const store = makeStore({ maxKeys: 8 });
    for (let i = 0; i < 10; i++)
      await store.consume({ checks: [check('leaser', 100, 100)], now: T0 + i });
    expect(store.stats().leasesTaken).toBeGreaterThan(0);
    for (let i = 0; i < 100; i++) {
      await store.consume({ checks: [check(`other:${i}`, 1, 5)], now: T0 + 10 });
      expect(store.stats().localKeys).toBeLessThanOrEqual(8);
    }
    await until(() => store.stats().leasesReturned === 1);
    // 10 spent at T0..T0+9, one refilled by T0+10: as if no lease had been taken.
    expect((await redisView('leaser', 100, 100, T0 + 10)).decisions[0]!.remaining).toBe(91);
  });

  it("without failMode 'local', rejects with RateLimitStoreError, and still spends what it leased", async () => {
    const own = await connectSharedClient();
    const store = new TwoTierStore({
      client: own,
      keyPrefix: prefix,
      time: 'client',
      timeoutMs: 5_000,
    });
    stores.push(store);
    for (let i = 0; i < 10; i++)
      await store.consume({ checks: [check('k', 100, 100)], now: T0 + i });
    own.disconnect();
    expect(store.consume({ checks: [check('k', 100, 100)], now: T0 + 10 })).toMatchObject({
      allowed: true,
    });
    await expect(
      store.consume({ checks: [check('elsewhere', 100, 100)], now: T0 + 10 }),
    ).rejects.toThrow(RateLimitStoreError);
    expect(store.stats()).toMatchObject({ fallbacks: 0, degraded: false });
  });
});

// Redis killed, refusing writes or frozen: two-tier.store.faults.spec.ts (`fault` project).
