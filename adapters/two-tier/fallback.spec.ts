import { jest } from '@jest/globals';
import type { Redis } from 'ioredis';
import { RelativeTime } from '../../lib/store/relative-time.js';
import type { ConsumeRequest, ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import { bucket, check } from '../../test/utils/checks.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { RedisStore, type RedisClient } from '../redis/index.js';
import { Fallback, localFallbackOf } from './fallback.js';

const T0 = 1_700_000_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    redis = new RedisStore({ client: switchable, keyPrefix: uniquePrefix('fallback'), time: 'client', timeoutMs: 5_000 });
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
    expect(fallback.peek([bucket('k', 40, 40)], T0 + 100).decisions[0]).toMatchObject({ remaining: 1 });
    fallback.reset([bucket('k', 40, 40)], T0 + 100);
    expect(fallback.peek([bucket('k', 40, 40)], T0 + 100).decisions[0]).toMatchObject({ remaining: 10 });
  });

  it('decides only the checks it is given (those lacking a lease), and never below a burst of one token', () => {
    const fallback = make(0.1);
    const checks = [check('leased', 1_000, 1_000), check('small', 2, 3)];
    const answer = fallback.consume(checks, [1], T0);
    expect(answer).toEqual({ allowed: true, decisions: [{ allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 5_000 }] });
  });

  it('switches once, probing Redis on an unref()\'d timer until it answers, then forgets its buckets', async () => {
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
    expect(fallback.peek([bucket('k', 4, 4)], T0).decisions[0]).toMatchObject({ remaining: 1 }); // a full bucket again
  });

  it('recovers when any Redis call answers, and can switch again after', () => {
    const fallback = make();
    fallback.recover(); // not degraded: nothing to do
    expect(fallback.recoveries).toBe(0);
    fallback.degrade();
    fallback.recover();
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
});
