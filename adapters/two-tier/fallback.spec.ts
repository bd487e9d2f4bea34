import { jest } from '@jest/globals';
import type { Redis } from 'ioredis';
import { RelativeTime } from '../../lib/store/relative-time.js';
import type { ConsumeRequest, ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import { bucket, check } from '../../test/utils/checks.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { RedisStore, type RedisClient } from '../redis/index.js';
import { Fallback, localFallbackOf } from './fallback.js';
import { sleep } from '../../test/utils/time.js';

const T0 = 1_700_000_000_000;

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('Fallback (real Redis)', () => {
  let client: Redis;
  /** The shared connection, reported down (RedisStore then fails fast) while `down` is set. */
  let down = false;
  let redis: RedisStore;
  const fallbacks: Fallback[] = [];

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(async () => {
    await client.quit();
  });
  beforeEach(() => {
    down = false;
    const switchable: RedisClient = {
      evalsha: (...args) => client.evalsha(...args),
      eval: (...args) => client.eval(...args),
      del: (...keys) => client.del(...keys),
      get status() {
        return down ? 'end' : client.status;
      },
    };
    redis = new RedisStore({
      client: switchable,
      keyPrefix: uniquePrefix('fallback'),
      time: 'client',
      timeoutMs: 5_000,
    });
  });
  afterEach(() => {
    for (const fallback of fallbacks.splice(0)) fallback.close();
  });

  const make = (localShare = 0.25, probeIntervalMs = 20) => {
    const time = new RelativeTime();
    time.relative(T0);
    const fallback = new Fallback(redis, time, localShare, probeIntervalMs);
    fallbacks.push(fallback);
    return fallback;
  };

  it('decides from its share of each limit, without Redis', () => {
    down = true;
    const fallback = make(0.25);
    const c = check('k', 40, 40); // 10/s, burst 10
    let admitted = 0;
    for (let i = 0; i < 20; i++) if (fallback.consume([c], [0], T0).allowed) admitted++;
    expect(admitted).toBe(10);
    expect(fallback.decisions).toBe(20);
    expect(fallback.peek([bucket('k', 40, 40)], T0 + 100).decisions[0]).toMatchObject({
      remaining: 1,
    });
    fallback.reset([bucket('k', 40, 40)], T0 + 100);
    expect(fallback.peek([bucket('k', 40, 40)], T0 + 100).decisions[0]).toMatchObject({
      remaining: 10,
    });
  });

  it('decides only the checks it is given (those lacking a lease)', () => {
    const fallback = make(0.5);
    const checks = [check('leased', 1_000, 1_000), check('small', 2, 4)];
    const answer = fallback.consume(checks, [1], T0);
    // 1/s, burst 2: one token left, full again in 1 s.
    expect(answer).toEqual({
      allowed: true,
      decisions: [{ allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 1_000 }],
    });
  });

  it.each([
    [1, 4, 0],
    [3, 4, 0],
    [4, 4, 4],
    [6, 4, 4],
    [10, 3, 9],
  ])(
    'a fleet falling back together never admits more than the limit: burst %i over %i instances admits %i at once',
    (burst, instances, atOnce) => {
      const rate = 4;
      const fleet = Array.from({ length: instances }, () => make(1 / instances));
      const c = check('shared', rate, burst);
      const admit = (now: number) => {
        let admitted = 0;
        for (const fallback of fleet) while (fallback.consume([c], [0], now).allowed) admitted++;
        return admitted;
      };
      let total = admit(T0);
      expect(total).toBe(atOnce);
      expect(total).toBeLessThanOrEqual(burst);
      // Then every instance takes all it is given, every 10 ms for 5 s: never over burst + rate x T, and close to it.
      for (let t = 10; t <= 5_000; t += 10) {
        total += admit(T0 + t);
        expect(total).toBeLessThanOrEqual(Math.floor(burst + (rate * t) / 1000 + 1e-9));
      }
      expect(total).toBeGreaterThanOrEqual(burst + rate * 5 - instances);
    },
  );

  it('tells a request it cannot take yet when its share will allow it, charging nothing', () => {
    const fallback = make(0.25);
    const c = check('k', 4, 1); // local: 1/s, a quarter token of burst: the first token after 750 ms
    expect(fallback.consume([c], [0], T0)).toEqual({
      allowed: false,
      decisions: [{ allowed: false, remaining: 0, retryAfterMs: 750, resetMs: 0, reason: 'limit' }],
    });
    expect(fallback.consume([c], [0], T0 + 749).allowed).toBe(false);
    expect(fallback.consume([c], [0], T0 + 750).allowed).toBe(true);
    expect(fallback.consume([c], [0], T0 + 751).allowed).toBe(false);
    expect(fallback.consume([c], [0], T0 + 1_750).allowed).toBe(true); // then one per second
    // A cost above the limit's own burst is still refused as such.
    expect(fallback.consume([check('k', 4, 1, 2)], [0], T0 + 5_000).decisions[0]).toMatchObject({
      reason: 'cost-exceeds-burst',
    });
  });

  it("switches once, probing Redis on an unref()'d timer until two writes in a row succeed, and keeps its buckets", async () => {
    down = true;
    const fallback = make();
    const setInterval = jest.spyOn(globalThis, 'setInterval');
    try {
      expect(fallback.degraded).toBe(false);
      expect(fallback.degrade()).toBe(true);
      expect(fallback.degrade()).toBe(false);
      expect(setInterval).toHaveBeenCalledTimes(1);
      expect((setInterval.mock.results[0]!.value as NodeJS.Timeout).hasRef()).toBe(false);
    } finally {
      setInterval.mockRestore();
    }
    expect(fallback).toMatchObject({ degraded: true, switches: 1 });
    fallback.consume([check('k', 4, 4)], [0], T0);
    await until(() => fallback.probes >= 2);
    expect(fallback.degraded).toBe(true); // Redis still down

    down = false;
    await until(() => !fallback.degraded);
    expect(fallback.recoveries).toBe(1);
    const probes = fallback.probes;
    await sleep(60);
    expect(fallback.probes).toBe(probes); // no probe once back
    expect(fallback.probes).toBeGreaterThanOrEqual(4); // two failed, two that wrote
    expect(fallback.peek([bucket('k', 4, 4)], T0).decisions[0]).toMatchObject({ remaining: 0 }); // kept: its one token spent
  });

  it('hands out no fresh local burst when Redis flaps: the buckets outlive each return to Redis', () => {
    const fallback = make(0.5);
    const c = check('k', 2, 10); // local: 1/s, burst 5
    let admitted = 0;
    for (let round = 0; round < 5; round++) {
      fallback.degrade();
      for (let i = 0; i < 10; i++) if (fallback.consume([c], [0], T0 + round).allowed) admitted++;
      fallback.succeeded();
      fallback.succeeded();
      expect(fallback.degraded).toBe(false);
    }
    expect(fallback.recoveries).toBe(5);
    expect(admitted).toBe(5); // the local burst once: 4 ms at 1/s refill nothing
  });

  it('recovers after two successful writes in a row (a failure in between starts again), and can switch again after', () => {
    const fallback = make();
    fallback.succeeded(); // not degraded: nothing to do
    fallback.recover();
    expect(fallback.recoveries).toBe(0);
    fallback.degrade();
    fallback.succeeded();
    fallback.failed();
    fallback.succeeded();
    expect(fallback.degraded).toBe(true);
    fallback.succeeded();
    expect(fallback).toMatchObject({ degraded: false, recoveries: 1 });
    expect(fallback.degrade()).toBe(true);
    expect(fallback.switches).toBe(2);
  });

  it('stops probing at close, and never switches after', async () => {
    down = true;
    const fallback = make();
    fallback.degrade();
    fallback.close();
    const probes = fallback.probes;
    await sleep(60);
    expect(fallback.probes).toBe(probes);
    fallback.recover();
    expect(fallback.degrade()).toBe(false);
  });

  it('is exposed as the LocalFallback capability: active while degraded, deciding with the function given', () => {
    const fallback = make();
    const decided: ConsumeRequest[] = [];
    const result: ConsumeResult = { allowed: true, decisions: [] };
    const capability = localFallbackOf(fallback, (request) => {
      decided.push(request);
      return result;
    });
    expect(capability).toMatchObject({ active: false });
    fallback.degrade();
    expect(capability.active).toBe(true);
    const { consumeLocally } = capability; // usable detached, as the module may hold it
    const request = { checks: [], now: T0 };
    expect(consumeLocally(request)).toBe(result);
    expect(decided).toEqual([request]);
  });

  it('tells its watchers of every switch, once each way; a watcher that throws stops neither the switch nor the others', () => {
    down = true; // no probe succeeds on its own
    const fallback = make();
    const capability = localFallbackOf(fallback, () => ({ allowed: true, decisions: [] }));
    const told: boolean[] = [];
    capability.watch!(() => {
      throw new Error('watcher bug');
    });
    const stop = capability.watch!((active) => told.push(active));
    fallback.degrade();
    fallback.degrade(); // already degraded: no switch
    fallback.succeeded();
    fallback.succeeded(); // recovered
    fallback.recover(); // already recovered
    expect(told).toEqual([true, false]);
    stop();
    fallback.degrade();
    expect(told).toEqual([true, false]);
    expect(fallback.degraded).toBe(true);
  });
});
