/**
 * TwoTierStore when its Redis fails: killed and restarted (local fallback),
 * refusing writes (out of memory, read-only replica), frozen (SIGSTOP). Each
 * suite breaks a redis-server of its own; in the `fault` project
 * (jest.config.ts). The rest of TwoTierStore's spec, two-tier.store.spec.ts,
 * is a unit spec.
 */
import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  ConsumeRequest,
  ConsumeResult,
  MaybePromise,
} from '../../lib/store/rate-limit-store.interface.js';
import { rawCommand, uniquePrefix } from '../../test/utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../../test/utils/test-clock-store-options.js';
import { RECOMMENDED_OPTIONS } from '../../test/utils/redis-client.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { sleep, until } from '../../test/utils/time.js';
import { TwoTierStore } from './index.js';
import { check } from '../../test/utils/checks.js';

const T0 = 1_700_000_000_000;
const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as { then?: unknown })?.then === 'function';

describe('TwoTierStore when Redis fails (local fallback)', () => {
  const redis = withRedisServer({
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 20 },
    quietErrors: true,
  });

  it("answers failMode 'local' requests from a local share of each limit while Redis is down, probes it, and comes back by itself", async () => {
    const store = new TwoTierStore({
      client: redis.client,
      keyPrefix: uniquePrefix('fallback'),
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
      instances: 4,
      probeIntervalMs: 50,
    });
    try {
      const c = check('k', 40, 40); // fallback: 10/s, burst 10
      expect(await store.consume({ checks: [c], now: T0 })).toMatchObject({ allowed: true });
      await redis.server.kill();
      const first = consumeOrFallBack(store, { checks: [c], now: T0 + 1 });
      expect(await first).toEqual({
        allowed: true,
        decisions: [{ allowed: true, remaining: 9, retryAfterMs: 0, resetMs: 100 }],
      });
      expect(store.degraded).toBe(true);
      let admitted = 1;
      for (let i = 0; i < 20; i++) {
        const answer = consumeOrFallBack(store, { checks: [c], now: T0 + 1 });
        expect(isPromise(answer)).toBe(false); // no Redis call, no wait
        if ((answer as ConsumeResult).allowed) admitted++;
      }
      expect(admitted).toBe(10);
      expect(store.stats()).toMatchObject({ fallbacks: 1, fallbackDecisions: 21 });
      // Requests that do not ask for 'local' still go to Redis, and fail for the module to resolve.
      await expect(store.consume({ checks: [c], now: T0 + 1 })).rejects.toThrow(
        RateLimitStoreError,
      );
      expect(store.stats().fallbackDecisions).toBe(21);

      await redis.server.restart();
      await until(() => !store.degraded);
      expect(store.stats().recoveries).toBe(1);
      const back = store.consume({ checks: [check('after', 40, 40)], now: T0 + 2 });
      expect(isPromise(back)).toBe(true);
      expect(await back).toMatchObject({ allowed: true, decisions: [{ remaining: 39 }] });
    } finally {
      await store.close();
    }
  });
});

/** Ways to make a live redis-server answer reads but refuse writes, and to undo it. */
const WRITE_REFUSALS: [string, (port: number) => Promise<void>, (port: number) => Promise<void>][] =
  [
    [
      'out of memory under noeviction',
      async (port) => {
        await rawCommand(port, ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
        await rawCommand(port, ['CONFIG', 'SET', 'maxmemory', '1']);
      },
      async (port) => void (await rawCommand(port, ['CONFIG', 'SET', 'maxmemory', '0'])),
    ],
    [
      'a read-only replica (its master gone)',
      async (port) => {
        await rawCommand(port, ['CONFIG', 'SET', 'replica-read-only', 'yes']);
        await rawCommand(port, ['REPLICAOF', '127.0.0.1', '1']); // nothing listens there
      },
      async (port) => void (await rawCommand(port, ['REPLICAOF', 'NO', 'ONE'])),
    ],
  ];

describe('TwoTierStore when Redis answers reads but refuses writes', () => {
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 20 },
    quietErrors: true,
  });

  it.each(WRITE_REFUSALS)(
    "keeps failMode 'local' within its share for the whole outage (%s): probes write, no fresh local burst",
    async (_name, refuseWrites, allowWrites) => {
      const probeIntervalMs = 20;
      const store = new TwoTierStore({
        client: redis.client,
        keyPrefix: uniquePrefix('refused'),
        time: 'client',
        // A refused write is an error reply at once: no call waits on this deadline.
        timeoutMs: ANSWERED_DEADLINE_MS,
        instances: 2,
        probeIntervalMs,
      });
      try {
        const c = check('k', 20, 200); // local share: 10/s, burst 100
        expect(await store.consume({ checks: [c], now: T0 })).toMatchObject({ allowed: true });
        await refuseWrites(redis.server.port);
        expect(await redis.client.get('anything')).toBeNull(); // reads still answered
        await expect(
          store.redisStore.lease({ checks: [{ ...c, maxExtra: 0 }], now: T0 }),
        ).rejects.toThrow(RateLimitStoreError);

        // 1 s of the requests' clock, 5 requests every 10 ms; at least as long in real time: 50 probe intervals.
        const start = T0 + 1;
        let now = start;
        let admitted = 0;
        const startedAt = performance.now();
        for (let step = 0; step < 100; step++, now += 10) {
          for (let i = 0; i < 5; i++)
            if ((await consumeOrFallBack(store, { checks: [c], now })).allowed) admitted++;
          await sleep(10);
        }
        const elapsed = now - 10 - start;
        expect(performance.now() - startedAt).toBeGreaterThanOrEqual(50 * probeIntervalMs);
        // This instance's share of the bucket over the outage: half of (burst + rate x elapsed).
        const bound = Math.floor(0.5 * (200 + 20 * (elapsed / 1000)));
        if (process.env.HOLDUP_REPORT)
          process.stdout.write(
            `${JSON.stringify({ refusal: _name, admitted, bound, stats: store.stats() })}\n`,
          );
        expect(admitted).toBeLessThanOrEqual(bound);
        expect(admitted).toBeGreaterThanOrEqual(100); // the local burst was given, once
        expect(store.stats()).toMatchObject({ degraded: true, fallbacks: 1, recoveries: 0 });
        expect(store.stats().redisCalls).toBeGreaterThan(20); // the probes kept asking

        // Writes accepted again: back on Redis after two successful probes.
        await allowWrites(redis.server.port);
        await until(() => !store.degraded);
        expect(store.stats()).toMatchObject({ fallbacks: 1, recoveries: 1 });
        const back = store.consume({ checks: [check('after', 20, 200)], now });
        expect(isPromise(back)).toBe(true);
        expect(await back).toMatchObject({ allowed: true, decisions: [{ remaining: 199 }] });
      } finally {
        await store.close();
      }
    },
  );
});

describe("TwoTierStore on a frozen Redis ('open' / 'closed')", () => {
  // A server per test (resumed before it is stopped, should a test leave it frozen).
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 20 },
    quietErrors: true,
  });

  it('decides every request within its own timeoutMs, however many calls in flight it waits on', async () => {
    /**
     * Timers and the event loop run late on a loaded 2-core machine (stalls of 250 ms seen in
     * CI, and of 2 s in a healthy call): a deadline of 1 s with 800 ms of margin, which the
     * old behaviour (up to 3 x timeoutMs, 3 s) still fails.
     */
    const timeoutMs = 1_000;
    const marginMs = 800;
    const store = new TwoTierStore({
      client: redis.client,
      keyPrefix: uniquePrefix('frozen'),
      time: 'client',
      timeoutMs,
    });
    try {
      const c = check('one-key', 1_000, 1_000);
      expect(await store.consume({ checks: [c], now: T0 })).toMatchObject({ allowed: true });
      redis.server.pause();
      // A request on the same key every 35 ms for 2.1 s (two deadlines): each joins the call in
      // flight, if any.
      const timings: Promise<{ ms: number; rejected: boolean }>[] = [];
      for (let i = 0; i < 60; i++) {
        const started = performance.now();
        timings.push(
          Promise.resolve(store.consume({ checks: [c], now: T0 + 1 + i })).then(
            () => ({ ms: performance.now() - started, rejected: false }),
            (error: unknown) => ({
              ms: performance.now() - started,
              rejected: error instanceof RateLimitStoreError,
            }),
          ),
        );
        await sleep(35);
      }
      const results = await Promise.all(timings);
      expect(results.every((result) => result.rejected)).toBe(true);
      const slowest = Math.max(...results.map((result) => result.ms));
      if (process.env.HOLDUP_REPORT)
        process.stdout.write(
          `${JSON.stringify({ timeoutMs, slowest: Math.round(slowest), rejected: results.filter((r) => r.rejected).length })}\n`,
        );
      expect(slowest).toBeLessThan(timeoutMs + marginMs);
    } finally {
      redis.server.resume();
      await store.close();
    }
  });
});

/** What the module does with a request whose `failMode` is `'local'` (see `RateLimiter.evaluate`). */
function consumeOrFallBack(
  store: TwoTierStore,
  request: ConsumeRequest,
): MaybePromise<ConsumeResult> {
  const local = store.localFallback;
  if (local.active) return local.consumeLocally(request);
  const answer = store.consume(request);
  return isPromise(answer) ? answer.catch(() => local.consumeLocally(request)) : answer;
}
