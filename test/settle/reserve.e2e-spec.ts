/**
 * `RateLimiter.reserve()` (issue 30): reserve an estimate, settle the actual.
 * On the memory store, and on 4 instances sharing one Redis (each its own
 * client and store, as 4 processes would be): concurrent reservations on one
 * key are exact on RedisStore, and never over the budget on TwoTierStore.
 */
import 'reflect-metadata';
import type { Redis } from 'ioredis';
import { ManualClock, MemoryStore, RateLimiter, type RateLimitStore } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../utils/test-clock-store-options.js';

const T0 = 1_700_000_000_000;
const BUDGET = { name: 'tokens', rate: 100, burst: 1000 };
const OPTIONS = { failMode: 'closed', ipv6Subnet: 64, errorFormat: 'nest' } as const;

/** `count` reservations of 100 spread over the limiters, all at once. */
async function reserveAll(limiters: readonly RateLimiter[], count: number) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      limiters[i % limiters.length]!.reserve('team-a', BUDGET, { cost: 100 }),
    ),
  );
}

describe('RateLimiter.reserve (memory store)', () => {
  let clock: ManualClock;
  let limiter: RateLimiter;
  beforeEach(() => {
    clock = new ManualClock(T0);
    limiter = new RateLimiter(new MemoryStore(), clock, OPTIONS);
  });
  afterEach(() => limiter.onApplicationShutdown());

  it('reserves, settles lower (refund) and higher (debt), and the debt is waited out', async () => {
    const first = await reserveAll([limiter], 20);
    const allowed = first.filter((r) => r.allowed);
    expect(allowed).toHaveLength(10);
    expect(first.find((r) => !r.allowed)).toMatchObject({ retryAfterMs: 1000, reserved: 100 });
    await Promise.all(allowed.map((r) => r.settle(50)));
    const second = (await reserveAll([limiter], 20)).filter((r) => r.allowed);
    expect(second).toHaveLength(5);
    await Promise.all(second.map((r) => r.settle(150)));
    const waiting = await limiter.reserve('team-a', BUDGET, { cost: 100 });
    expect(waiting).toMatchObject({ allowed: false, retryAfterMs: 3500 });
    // Settling a denied reservation, or twice, changes nothing.
    await waiting.settle(0);
    await second[0]!.settle(0);
    clock.advance(3500);
    expect((await limiter.reserve('team-a', BUDGET, { cost: 100 })).allowed).toBe(true);
  });

  it('cancel gives the whole reservation back; bad actual costs are refused, leaving it open', async () => {
    const r = await limiter.reserve('job', BUDGET, { cost: 1000 });
    expect(r.allowed).toBe(true);
    expect((await limiter.peek('job', BUDGET)).remaining).toBe(0);
    await expect(r.settle(-1)).rejects.toThrow('the actual cost must be a number >= 0, got -1');
    await expect(r.settle(Number.NaN)).rejects.toThrow(TypeError);
    await r.cancel();
    await r.cancel();
    expect((await limiter.peek('job', BUDGET)).remaining).toBe(1000);
    await expect(limiter.reserve('job', BUDGET, { cost: 0 })).rejects.toThrow(
      'RateLimiter.reserve: cost must be a positive number, got 0',
    );
  });

  it('refuses a store that cannot settle', async () => {
    const store = new MemoryStore() as RateLimitStore & { settle?: unknown };
    Object.defineProperty(store, 'settle', { value: undefined });
    const plain = new RateLimiter(store, clock, OPTIONS);
    await expect(plain.reserve('k', BUDGET)).rejects.toThrow(
      'RateLimiter.reserve: the store cannot settle a reservation (it has no settle())',
    );
  });
});

describe.each(['redis', 'two-tier'] as const)(
  'RateLimiter.reserve: 4 instances on one Redis (%s)',
  (kind) => {
    const clients: Redis[] = [];
    let limiters: RateLimiter[];
    let clock: ManualClock;

    beforeAll(async () => {
      for (let i = 0; i < 4; i++) clients.push(await connectSharedClient());
    });
    afterAll(async () => {
      await Promise.all(clients.map((client) => client.quit()));
    });
    beforeEach(() => {
      clock = new ManualClock(T0);
      const keyPrefix = uniquePrefix(`reserve-${kind}`);
      limiters = clients.map((client) => {
        const options = { client, keyPrefix, ...ON_TEST_CLOCK };
        const store = kind === 'redis' ? new RedisStore(options) : new TwoTierStore(options);
        return new RateLimiter(store, clock, OPTIONS);
      });
    });
    afterEach(() => Promise.all(limiters.map((limiter) => limiter.onApplicationShutdown())));

    it('20 concurrent reservations of 100 against 1,000: 10 (at most, with local tiers); refunds and debt count across instances', async () => {
      const first = (await reserveAll(limiters, 20)).filter((r) => r.allowed);
      if (kind === 'redis') expect(first).toHaveLength(10);
      else expect(first.length).toBeLessThanOrEqual(10);
      await Promise.all(first.map((r) => r.settle(50)));
      const second = (await reserveAll(limiters, 20)).filter((r) => r.allowed);
      if (kind === 'redis') expect(second).toHaveLength(5);
      await Promise.all(second.map((r) => r.settle(150)));
      // The bound (docs/settle.md): actual costs admitted <= burst + rate x elapsed (0 s here)
      // + the overspends of the calls in flight at once (5 x 50: all five overspent before any settled).
      const actual = first.length * 50 + second.length * 150;
      expect(actual).toBeLessThanOrEqual(1000 + second.length * 50);
      if (kind === 'redis') expect(actual).toBe(1250);
      // Every instance now sees the debt: a reservation waits at least until it is repaid.
      const waits = await Promise.all(
        limiters.map((limiter) => limiter.reserve('team-a', BUDGET, { cost: 100 })),
      );
      for (const waiting of waits) expect(waiting.allowed).toBe(false);
      if (kind === 'redis') for (const waiting of waits) expect(waiting.retryAfterMs).toBe(3500);
    });
  },
);
