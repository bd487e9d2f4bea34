/**
 * RedisStore against a Redis that dies, freezes, forgets its scripts or
 * answers errors. Each test runs its own redis-server (never the shared one).
 *
 * What must hold: every call settles within `timeoutMs` plus a small margin,
 * either answered or rejected with RateLimitStoreError; nothing is left as an
 * unhandled rejection (jest-circus fails the running test on any, and the
 * plain-Node variant in test/redis/faults.e2e-spec.ts checks it with a real
 * `process.on('unhandledRejection')` spy); and the store is exact again once
 * Redis is back, without being recreated.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis, RedisOptions } from 'ioredis';
import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import {
  freePort,
  startRedisServer,
  uniquePrefix,
  type RedisServer,
} from '../../test/utils/redis-harness.js';
import { approximately } from '../../test/utils/approximately.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { createRedisClient, RECOMMENDED_OPTIONS } from '../../test/utils/redis-client.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { until } from '../../test/utils/time.js';
import { watchStalls } from '../../test/utils/stall-watch.js';
import { ModelStore } from '../../lib/store/contract/model-store.js';
import { DEFAULT_REDIS_TIMEOUT_MS, RedisStore } from './index.js';
import { bucket, check } from '../../test/utils/checks.js';

const TIMEOUT_MS = DEFAULT_REDIS_TIMEOUT_MS;
/** Slack for a loaded 2-core CI machine: timers and the event loop run late. */
const MARGIN_MS = 400;
/** For calls whose point is not the timeout: a loaded machine must not turn them into timeouts. */
const PATIENT_MS = 5_000;

/** What the tests recommend, and ioredis' defaults (offline queue, resending in-flight commands). */
const clientConfigs: [string, RedisOptions][] = [
  ['recommended options', RECOMMENDED_OPTIONS],
  ['ioredis defaults', {}],
];

interface Call {
  readonly ms: number;
  readonly error?: unknown;
}

/** How late this process ran while {@link hammer} timed its calls. */
const stalls = watchStalls();
afterAll(() => stalls.stop());

/** `concurrency` loops of consume calls until `stop()`, each call timed. */
async function hammer(store: RedisStore, stop: () => boolean, concurrency = 3): Promise<Call[]> {
  stalls.reset();
  const calls: Call[] = [];
  let now = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!stop()) {
        const started = performance.now();
        try {
          await store.consume({ checks: [check('load', 1e6, 1e6)], now: now++ });
          calls.push({ ms: performance.now() - started });
        } catch (error) {
          calls.push({ ms: performance.now() - started, error });
        }
        await sleep(5);
      }
    }),
  );
  return calls;
}

function expectBounded(calls: readonly Call[]): void {
  expect(calls.length).toBeGreaterThan(0);
  const slowest = Math.max(...calls.map((call) => call.ms));
  // Give or take the machine's own stalls (test/utils/stall-watch.ts).
  expect(slowest).toBeLessThanOrEqual(TIMEOUT_MS + MARGIN_MS + stalls.maxMs);
  for (const call of calls)
    if (call.error !== undefined) expect(call.error).toBeInstanceOf(RateLimitStoreError);
}

/** Polls until the store answers again (it must recover on its own). */
async function waitForRecovery(store: RedisStore, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await store.peek({ checks: [bucket('probe', 1, 1)], now: 0 });
      return;
    } catch (error) {
      expect(error).toBeInstanceOf(RateLimitStoreError);
      if (Date.now() > deadline)
        throw new Error(`store did not recover within ${timeoutMs} ms: ${String(error)}`);
      await sleep(20);
    }
  }
}

/**
 * A fresh bucket behaves exactly: burst, exact wait, refill. Checked through
 * a second, patient store on the same client and key prefix: a call that timed
 * out on a loaded machine might still have been applied, which would make the
 * exact sequence unprovable. (That the store under test itself recovered is
 * what `waitForRecovery` shows.)
 */
async function expectExact(tested: RedisStore, client: Redis, keyPrefix: string): Promise<void> {
  const store = new RedisStore({ client, keyPrefix, ...ON_TEST_CLOCK, timeoutMs: PATIENT_MS });
  expect(tested.calls).toBeGreaterThan(0);
  const c = check(`exact:${Math.random()}`, 1, 3);
  for (const remaining of [2, 1, 0]) {
    expect((await store.consume({ checks: [c], now: 10_000 })).decisions[0]).toEqual({
      allowed: true,
      remaining,
      retryAfterMs: 0,
      resetMs: 1_000 * (3 - remaining),
    });
  }
  expect((await store.consume({ checks: [c], now: 10_000 })).decisions[0]).toEqual({
    allowed: false,
    remaining: 0,
    retryAfterMs: 1_000,
    resetMs: 3_000,
    reason: 'limit',
  });
  expect((await store.consume({ checks: [c], now: 11_000 })).decisions[0]).toMatchObject({
    allowed: true,
    remaining: 0,
  });
}

describe('RedisStore under Redis faults', () => {
  let prefix = '';
  const makeStore = (redis: Redis, timeoutMs = TIMEOUT_MS) => {
    prefix = uniquePrefix('faults');
    return new RedisStore({ client: redis, keyPrefix: prefix, ...ON_TEST_CLOCK, timeoutMs });
  };

  /**
   * A server of its own per test, and a client that reconnects quickly (the
   * default backs off to 2 s) to keep the test short; its connection errors
   * are expected here (ioredis would log them).
   */
  const ownServer = (options: RedisOptions) =>
    withRedisServer({
      each: true,
      client: { retryStrategy: () => 50, ...options },
      quietErrors: true,
    });

  describe.each(clientConfigs)('with %s', (_label, options) => {
    const redis = ownServer(options);

    it('settles every call while Redis is killed, and recovers when it restarts', async () => {
      const store = makeStore(redis.client);
      let stopped = false;
      const load = hammer(store, () => stopped);
      await sleep(150);
      await redis.server.kill();
      await sleep(400);
      // At least one call failed while down: waited for, not assumed of the 400 ms (a stalled
      // process may not have run the load in them).
      await until(() => store.errors + store.timeouts > 0);
      const failuresWhileDown = store.errors + store.timeouts;
      await redis.server.restart();
      await waitForRecovery(store);
      await sleep(100);
      stopped = true;
      const calls = await load;

      expectBounded(calls);
      expect(failuresWhileDown).toBeGreaterThan(0);
      expect(calls.filter((call) => call.error === undefined).length).toBeGreaterThan(10);
      await expectExact(store, redis.client, prefix);
      // The restarted server had no script: recovered through EVAL.
      expect(store.scriptReloads).toBeGreaterThanOrEqual(2);
    });

    it('times out every call while Redis is frozen (SIGSTOP), and is exact again after SIGCONT', async () => {
      const store = makeStore(redis.client);
      let stopped = false;
      const load = hammer(store, () => stopped);
      await sleep(150);
      redis.server.pause();
      await sleep(500);
      redis.server.resume();
      await sleep(150);
      stopped = true;
      const calls = await load;
      // Let the frozen commands' late replies arrive: they must be swallowed.
      expect(await redis.client.ping()).toBe('PONG');

      expectBounded(calls);
      expect(store.timeouts).toBeGreaterThan(0);
      expect(
        calls.filter((call) => call.error !== undefined).every((call) => call.ms >= TIMEOUT_MS - 5),
      ).toBe(true);
      await expectExact(store, redis.client, prefix);
    });

    it('settles every call when Redis is killed while frozen (late failures are swallowed)', async () => {
      const store = makeStore(redis.client);
      let stopped = false;
      const load = hammer(store, () => stopped);
      await sleep(150);
      redis.server.pause();
      await sleep(300);
      // The commands sent while frozen timed out long ago; now they fail (or
      // are resent, with ioredis defaults) after their callers were answered.
      await redis.server.kill();
      await sleep(200);
      await redis.server.restart();
      await waitForRecovery(store);
      await sleep(150);
      stopped = true;
      const calls = await load;

      expectBounded(calls);
      expect(store.timeouts).toBeGreaterThan(0);
      await expectExact(store, redis.client, prefix);
    });
  });

  describe('with the recommended options', () => {
    const redis = ownServer(clientConfigs[0]![1]);

    it('rides through SCRIPT FLUSH mid-run without an error or a wrong decision', async () => {
      const store = makeStore(redis.client, PATIENT_MS);
      const admin = createRedisClient(redis.server.url);
      try {
        await store.peek({ checks: [bucket('warm-up', 1, 1)], now: 0 });
        // One script per operation: load consume's too, and consume_one's (a single token bucket).
        await store.consume({ checks: [check('warm-up', 1, 1), check('warm-up-2', 1, 1)], now: 0 });
        await store.consume({ checks: [check('warm-up', 1, 1)], now: 0 });
        const reloadsBefore = store.scriptReloads;
        const model = new ModelStore();
        const checks = [check('a', 5, 3), check('b', 1, 2)];
        for (let i = 0; i < 120; i++) {
          if (i === 30 || i === 80) await admin.script('FLUSH');
          const request = { checks: i % 3 === 0 ? checks : [checks[0]!], now: i * 97.5 };
          expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
        }
        // Each flush costs one reload of each script used after it: consume (two checks) and consume_one (one).
        expect(store.scriptReloads - reloadsBefore).toBe(4);

        // Concurrent callers while flushing: nobody sees an error.
        let stopped = false;
        const load = hammer(store, () => stopped, 4);
        for (let i = 0; i < 5; i++) {
          await sleep(30);
          await admin.script('FLUSH');
        }
        stopped = true;
        const calls = await load;
        expect(calls.filter((call) => call.error !== undefined)).toEqual([]);
      } finally {
        admin.disconnect();
      }
    });

    it('rejects fast with the cause when Redis answers errors (OOM), and is exact once it stops', async () => {
      // Patient: the rejection must come from Redis' error reply, not from a timeout.
      const store = makeStore(redis.client, PATIENT_MS);
      const admin = createRedisClient(redis.server.url);
      try {
        await admin.config('SET', 'maxmemory', '1');
        const started = performance.now();
        const failure = await store
          .consume({ checks: [check('k', 1, 1)], now: 0 })
          .catch((error: unknown) => error);
        expect(performance.now() - started).toBeLessThan(PATIENT_MS / 2);
        expect(failure).toBeInstanceOf(RateLimitStoreError);
        expect(String((failure as Error).message)).toMatch(/OOM/);
        expect(store.errors).toBe(1);
        await admin.config('SET', 'maxmemory', '0');
        await expectExact(store, redis.client, prefix);
      } finally {
        admin.disconnect();
      }
    });
  });

  // This one's client exists before its server does (on a port reserved for
  // it): started by the test, not by the fixture, and stopped here.
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  afterEach(async () => {
    client?.disconnect();
    client = undefined;
    await server?.stop();
    server = undefined;
  });

  it('fails fast while Redis is down from the start, queues nothing, and recovers when it comes up', async () => {
    const port = await freePort();
    // ioredis defaults: an offline queue that would replay every command on connect.
    client = createRedisClient(`redis://127.0.0.1:${port}`, { retryStrategy: () => 50 });
    client.on('error', () => {});
    const store = makeStore(client);
    const c = check('outage', 1, 5);
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await expect(store.consume({ checks: [c], now: 0 })).rejects.toThrow(/not ready/);
      expect(performance.now() - started).toBeLessThan(MARGIN_MS);
    }
    server = await startRedisServer({ port });
    await waitForRecovery(store);
    // None of the ten refused calls reached Redis later: the bucket is untouched.
    const patient = new RedisStore({
      client,
      keyPrefix: prefix,
      time: 'client',
      timeoutMs: PATIENT_MS,
    });
    expect((await patient.consume({ checks: [c], now: 0 })).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 4,
    });
    await expectExact(store, client!, prefix);
  });
});
