/**
 * RedisStore with window limits, beyond the shared contract: a request of
 * several algorithms is one script call; window keys expire when their state
 * stops mattering; server time; what windows refuse (lease, block).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { WindowLimit } from '../../lib/store/rate-limit-store.interface.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { tokenBucket } from '../../test/utils/checks.js';
import { RedisStore } from './index.js';
import { redisKey } from './redis-keys.js';

const T = 1_700_000_040_000; // a multiple of 60 s
const fixed: WindowLimit = { algorithm: 'fixed-window', quota: 3, windowMs: 60_000 };
const sliding: WindowLimit = { algorithm: 'sliding-window', quota: 3, windowMs: 60_000 };

let client: Redis;
let prefix: string;
let store: RedisStore;

beforeAll(async () => {
  client = await connectSharedClient();
});
beforeEach(() => {
  prefix = uniquePrefix('windows');
  store = new RedisStore({ client, keyPrefix: prefix, time: 'client', timeoutMs: 5_000 });
});
afterEach(() => store.close());
afterAll(() => client.quit());

describe('RedisStore: window limits', () => {
  it('a request with a token bucket, a fixed and a sliding window is one script call, all or nothing', async () => {
    const checks = [
      { key: 'tb', limit: tokenBucket(1, 10), cost: 1 },
      { key: 'fw', limit: fixed, cost: 1 },
      { key: 'sw', limit: sliding, cost: 2 },
    ];
    // Padded, unlike the other tests' store (the next test checks the expiry itself).
    store.close();
    store = new RedisStore({ client, keyPrefix: prefix, ...ON_TEST_CLOCK });
    const before = store.calls;
    expect((await store.consume({ checks, now: T })).allowed).toBe(true);
    expect(store.calls - before).toBe(1);
    // The sliding window has 1 left: a cost of 2 is denied there, and nothing is charged anywhere.
    const denied = await store.consume({ checks, now: T + 1 });
    expect(denied.decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    const after = await store.peek({ checks, now: T + 1 });
    expect(after.decisions.map((d) => d.remaining)).toEqual([9, 2, 1]);
  });

  it('stores a window as start:end:count:previous, expiring at the window end (fixed) or one window later (sliding)', async () => {
    await store.consume({
      checks: [
        { key: 'f', limit: fixed, cost: 2 },
        { key: 's', limit: sliding, cost: 1 },
      ],
      now: T + 15_000,
    });
    expect(await client.get(redisKey(prefix, 'f'))).toBe(`${T}:${T + 60_000}:2:0`);
    expect(await client.get(redisKey(prefix, 's'))).toBe(`${T}:${T + 60_000}:1:0`);
    const fixedTtl = await client.pttl(redisKey(prefix, 'f'));
    const slidingTtl = await client.pttl(redisKey(prefix, 's'));
    expect(fixedTtl).toBeGreaterThan(45_000 - 1000);
    expect(fixedTtl).toBeLessThanOrEqual(45_000);
    expect(slidingTtl).toBeGreaterThan(105_000 - 1000);
    expect(slidingTtl).toBeLessThanOrEqual(105_000);
  });

  it('on Redis server time, a 300 ms fixed window starts over by itself', async () => {
    const server = new RedisStore({
      client,
      keyPrefix: uniquePrefix('windows-server'),
      time: 'server',
      timeoutMs: 5_000,
    });
    const small: WindowLimit = { algorithm: 'fixed-window', quota: 2, windowMs: 300 };
    const check = { key: 'small', limit: small, cost: 1 };
    let admitted = 0;
    let denied;
    for (let i = 0; i < 3; i++) {
      const result = await server.consume({ checks: [check], now: Date.now() });
      if (result.allowed) admitted++;
      else denied = result.decisions[0];
    }
    // Two admitted in the window (three if the calls straddle an edge, never more).
    expect(admitted).toBeGreaterThanOrEqual(2);
    if (denied !== undefined) {
      expect(denied.retryAfterMs).toBeLessThanOrEqual(300);
      await sleep(Math.ceil(denied.retryAfterMs) + 5);
      expect((await server.consume({ checks: [check], now: Date.now() })).allowed).toBe(true);
    }
    server.close();
  });

  it('refuses to lease or block a window', async () => {
    await expect(
      store.lease({ checks: [{ key: 'l', limit: fixed, cost: 1, maxExtra: 2 }], now: T }),
    ).rejects.toThrow(/cannot be leased/);
    await expect(
      store.block({ checks: [{ key: 'b', limit: sliding, durationMs: 1000 }], now: T }),
    ).rejects.toThrow(/not supported/);
  });
});
