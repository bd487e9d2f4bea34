import type { Redis } from 'ioredis';
import { MIN_RATE } from '../../lib/limits/resolve-bucket.js';
import { MAX_HORIZON_MS } from '../../lib/store/horizon.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { check } from '../../test/utils/checks.js';
import { RedisStore } from './redis.store.js';

/**
 * Issue 15, item 6: a bucket whose horizon (burst x 1000 / rate ms) is the
 * largest a limit may declare (MAX_HORIZON_MS) works on Redis as in memory:
 * its expiry is written as an integer Redis accepts, in both time modes.
 */
let client: Redis;

beforeAll(async () => {
  client = await connectSharedClient();
});

afterAll(async () => {
  await client.quit();
});

const LONGEST = [
  ['the smallest rate, burst 1', MIN_RATE, 1],
  ['1/day, the largest burst', 1 / 86_400, MAX_HORIZON_MS / 86_400_000],
  ['1000/s, the largest burst', 1000, MAX_HORIZON_MS],
] as const;

describe.each(['client', 'server'] as const)(
  'RedisStore (%s time) at the longest horizon',
  (time) => {
    it.each(LONGEST)(
      '%s: drains the whole burst at once, then denies; the key lives the whole horizon',
      async (_name, rate, burst) => {
        const keyPrefix = uniquePrefix('horizon');
        const store = new RedisStore({
          client,
          keyPrefix,
          time,
          timeoutMs: 5_000,
          expiryPaddingMs: MAX_HORIZON_MS,
        });
        const now = Date.now();
        const drain = await store.consume({ now, checks: [check('k', rate, burst, burst)] });
        expect(drain.allowed).toBe(true);
        expect(drain.decisions[0]).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
        expect(drain.decisions[0]!.resetMs).toBeCloseTo(MAX_HORIZON_MS, -3);
        // (With server time, real time passes between the calls: ask for more than it can refill.)
        const cost = Math.min(burst, 1_000_000);
        const denied = await store.consume({ now, checks: [check('k', rate, burst, cost)] });
        expect(denied.allowed).toBe(false);
        expect(denied.decisions[0]!.retryAfterMs).toBeGreaterThan((cost * 1000) / rate - 60_000);
        const [key] = await client.keys(`${keyPrefix}*`);
        // Expiry: the horizon plus the padding (both at their maximum), in ms.
        const pttl = await client.pttl(key!);
        expect(pttl).toBeGreaterThan(2 * MAX_HORIZON_MS - 60_000);
        expect(pttl).toBeLessThanOrEqual(2 * MAX_HORIZON_MS + 1);
        const refunded = await store.refund({ now, checks: [check('k', rate, burst, burst)] });
        expect(refunded.decisions[0]!.remaining).toBe(Math.floor(burst));
        await store.close();
      },
    );
  },
);

describe.each(['client', 'server'] as const)(
  'RedisStore (%s time) never writes an expiry in exponent form',
  (time) => {
    // Beyond what a limit may declare (checked at start-up), but the store
    // contract is public: a horizon of 1e18 ms (past %.17g's 17 digits) is
    // still an integer Redis accepts, so it must be written as one.
    it('a horizon of 1e18 ms is stored with its expiry', async () => {
      const keyPrefix = uniquePrefix('exponent');
      const store = new RedisStore({ client, keyPrefix, time, timeoutMs: 5_000 });
      const drain = await store.consume({
        now: Date.now(),
        checks: [check('k', 1000, 1e18, 1e18)],
      });
      expect(drain.allowed).toBe(true);
      const [key] = await client.keys(`${keyPrefix}*`);
      expect(await client.pttl(key!)).toBeGreaterThan(0.99e18);
      await store.close();
    });
  },
);
