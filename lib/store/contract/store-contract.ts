/**
 * The behaviour every RateLimitStore must have, as one shared suite
 * (`nestjs-holdup/store`): the built-in stores run it, and so can yours.
 *
 * ```ts
 * import { describeStoreContract, describeWindowStoreContract } from 'nestjs-holdup/store';
 *
 * describeStoreContract('MyStore', () => new MyStore());
 * describeWindowStoreContract('MyStore', () => new MyStore()); // if it supports the window algorithms
 * ```
 *
 * Time is always passed explicitly as `now`: nothing sleeps. Every test uses
 * its own random bucket keys, so a store shared between tests or workers (one
 * Redis) is fine. Tests are registered with the running test framework's
 * globals (Jest, Vitest with `globals: true`), or with `options.framework`.
 */
import { randomUUID } from 'node:crypto';
import { seededRandom } from '../../adaptive/seeded-random.js';
import type {
  BucketRef,
  RateLimitCheck,
  RateLimitStore,
  TokenBucketLimit,
} from '../rate-limit-store.interface.js';
import { approximatelyWith } from './approximately.js';
import { contractFramework, type StoreContractFramework } from './framework.js';
import { ModelStore } from './model-store.js';
import { describeSettlementCases } from './settlement-cases.js';

/** Options of {@link describeStoreContract} and {@link describeWindowStoreContract}. */
export interface StoreContractOptions {
  /** Called after each test (default: `store.close()`). */
  readonly teardown?: (store: RateLimitStore) => unknown;
  /** Time of the first step of each scenario (default: a realistic epoch in ms, so large clocks are covered). */
  readonly epoch?: number;
  /** What to register the tests with (default: the globals `describe`, `it`, `beforeEach`, `afterEach`, `expect`). */
  readonly framework?: StoreContractFramework;
}

/** A token bucket as the store contract takes it. @internal */
export const tokenBucket = (rate: number, burst: number): TokenBucketLimit => ({
  algorithm: 'token-bucket',
  rate,
  burst,
});

const bucket = (key: string, rate: number, burst: number): BucketRef => ({
  key,
  limit: tokenBucket(rate, burst),
});

/** Registers the shared store scenarios under `describe(name)`. */
export function describeStoreContract(
  name: string,
  makeStore: () => RateLimitStore | Promise<RateLimitStore>,
  options: StoreContractOptions = {},
): void {
  const { describe, it, beforeEach, afterEach, expect } = contractFramework(
    options.framework,
    'describeStoreContract',
  );
  const approximately = approximatelyWith.bind(undefined, expect);
  const T0 = options.epoch ?? 1_700_000_000_000;

  describe(`${name} (store contract)`, () => {
    let store: RateLimitStore;
    /** A bucket key no other test (or worker, or run) uses. */
    const key = (label = 'k') => `contract:${label}:${randomUUID()}`;
    const check = (k: string, rate: number, burst: number, cost = 1): RateLimitCheck => ({
      key: k,
      limit: tokenBucket(rate, burst),
      cost,
    });
    const consume = async (now: number, ...checks: RateLimitCheck[]) =>
      store.consume({ checks, now });
    const peek = async (now: number, ...checks: RateLimitCheck[]) =>
      store.peek({ checks: checks.map(({ key: k, limit }) => ({ key: k, limit })), now });

    beforeEach(async () => {
      store = await makeStore();
    });

    afterEach(async () => {
      await (options.teardown ? options.teardown(store) : store.close());
    });

    it('admits a full burst, then denies with the exact wait', async () => {
      const k = key();
      const c = check(k, 10, 5); // one token every 100 ms
      for (let i = 0; i < 5; i++) {
        const result = await consume(T0, c);
        expect(result.allowed).toBe(true);
        expect(result.decisions[0]).toEqual({
          allowed: true,
          remaining: 4 - i,
          retryAfterMs: 0,
          resetMs: 100 * (i + 1),
        });
      }
      const denied = await consume(T0, c);
      expect(denied).toEqual({
        allowed: false,
        decisions: [
          { allowed: false, remaining: 0, retryAfterMs: 100, resetMs: 500, reason: 'limit' },
        ],
      });
    });

    it('refills at the rate', async () => {
      const c = check(key(), 10, 5);
      for (let i = 0; i < 5; i++) await consume(T0, c);
      expect((await consume(T0 + 99, c)).allowed).toBe(false);
      expect((await consume(T0 + 99, c)).decisions[0]!.retryAfterMs).toBe(1);
      expect((await consume(T0 + 100, c)).decisions[0]).toEqual({
        allowed: true,
        remaining: 0,
        retryAfterMs: 0,
        resetMs: 500,
      });
      expect((await consume(T0 + 100, c)).decisions[0]).toMatchObject({
        allowed: false,
        retryAfterMs: 100,
      });
      expect((await peek(T0 + 350, c)).decisions[0]).toEqual({
        allowed: true,
        remaining: 2,
        retryAfterMs: 0,
        resetMs: 250,
      });
      expect((await peek(T0 + 600, c)).decisions[0]).toEqual({
        allowed: true,
        remaining: 5,
        retryAfterMs: 0,
        resetMs: 0,
      });
    });

    it('charges the cost and denies a cost the bucket cannot cover yet', async () => {
      const k = key();
      expect((await consume(T0, check(k, 10, 5, 3))).decisions[0]).toEqual({
        allowed: true,
        remaining: 2,
        retryAfterMs: 0,
        resetMs: 300,
      });
      expect((await consume(T0, check(k, 10, 5, 3))).decisions[0]).toEqual({
        allowed: false,
        remaining: 2,
        retryAfterMs: 100,
        resetMs: 300,
        reason: 'limit',
      });
      expect((await consume(T0, check(k, 10, 5, 2))).decisions[0]).toMatchObject({
        allowed: true,
        remaining: 0,
      });
    });

    it('never admits a cost above the burst, and charges nothing for it', async () => {
      const k = key();
      const result = await consume(T0, check(k, 10, 5, 6));
      expect(result).toEqual({
        allowed: false,
        decisions: [
          {
            allowed: false,
            remaining: 5,
            retryAfterMs: Number.POSITIVE_INFINITY,
            resetMs: 0,
            reason: 'cost-exceeds-burst',
          },
        ],
      });
      expect((await peek(T0, check(k, 10, 5))).decisions[0]).toMatchObject({ remaining: 5 });
    });

    it('admits all checks or none', async () => {
      const wide = check(key('wide'), 10, 5);
      const narrow = check(key('narrow'), 1, 1);
      const first = await consume(T0, wide, narrow);
      expect(first.allowed).toBe(true);
      expect(first.decisions.map((d) => d.remaining)).toEqual([4, 0]);

      const second = await consume(T0 + 10, wide, narrow);
      expect(second.allowed).toBe(false);
      // The admitting check reports its bucket as it stands: not charged.
      expect(second.decisions[0]).toEqual({
        allowed: true,
        remaining: 4,
        retryAfterMs: 0,
        resetMs: 90,
      });
      expect(second.decisions[1]).toEqual({
        allowed: false,
        remaining: 0,
        retryAfterMs: 990,
        resetMs: 990,
        reason: 'limit',
      });
      expect((await peek(T0 + 10, wide)).decisions[0]).toMatchObject({ remaining: 4, resetMs: 90 });
    });

    it('reports every denying check of a denied request', async () => {
      const a = check(key('a'), 1, 1);
      const b = check(key('b'), 2, 1);
      await consume(T0, a, b);
      const result = await consume(T0, a, b);
      expect(result.allowed).toBe(false);
      expect(result.decisions).toEqual([
        { allowed: false, remaining: 0, retryAfterMs: 1000, resetMs: 1000, reason: 'limit' },
        { allowed: false, remaining: 0, retryAfterMs: 500, resetMs: 500, reason: 'limit' },
      ]);
    });

    it('answers an empty request with an admission', async () => {
      expect(await store.consume({ checks: [], now: T0 })).toEqual({
        allowed: true,
        decisions: [],
      });
      expect(await store.peek({ checks: [], now: T0 })).toEqual({ allowed: true, decisions: [] });
      await store.reset({ checks: [], now: T0 });
    });

    it('peeks without charging', async () => {
      const c = check(key(), 10, 5);
      await consume(T0, c);
      for (let i = 0; i < 3; i++) {
        expect(await peek(T0, c)).toEqual({
          allowed: true,
          decisions: [{ allowed: true, remaining: 4, retryAfterMs: 0, resetMs: 100 }],
        });
      }
      expect((await peek(T0, check(key('fresh'), 10, 5))).decisions[0]).toEqual({
        allowed: true,
        remaining: 5,
        retryAfterMs: 0,
        resetMs: 0,
      });
    });

    it('resets the listed buckets only', async () => {
      const a = check(key('a'), 1, 2);
      const b = check(key('b'), 1, 2);
      await consume(T0, a, b);
      await consume(T0, a, b);
      expect((await consume(T0, a)).allowed).toBe(false);
      await store.reset({ checks: [bucket(a.key, 1, 2)], now: T0 });
      expect((await peek(T0, a, b)).decisions.map((d) => d.remaining)).toEqual([2, 0]);
      expect((await consume(T0, a)).decisions[0]).toMatchObject({ allowed: true, remaining: 1 });
      expect((await consume(T0, b)).allowed).toBe(false);
      await store.reset({ checks: [bucket(key('never-seen'), 1, 2)], now: T0 });
    });

    it('refunds tokens, never past a full bucket, and answers the bucket as it is afterwards', async () => {
      const c = check(key(), 10, 5); // one token every 100 ms
      for (let i = 0; i < 5; i++) await consume(T0, c);
      expect(await store.refund({ checks: [{ ...c, cost: 2 }], now: T0 })).toEqual({
        allowed: true,
        decisions: [{ allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 300 }],
      });
      expect((await consume(T0, c)).decisions[0]).toMatchObject({ allowed: true, remaining: 1 });
      // More than was taken: full, not fuller.
      expect(
        (await store.refund({ checks: [{ ...c, cost: 50 }], now: T0 })).decisions[0],
      ).toMatchObject({ remaining: 5, resetMs: 0 });
      for (let i = 0; i < 5; i++) expect((await consume(T0, c)).allowed).toBe(true);
      expect((await consume(T0, c)).allowed).toBe(false);
      // A bucket never charged stays full.
      expect(
        (await store.refund({ checks: [check(key('never-seen'), 10, 5, 3)], now: T0 }))
          .decisions[0],
      ).toMatchObject({ remaining: 5 });
    });

    it('blocks a bucket for a duration (a penalty): empty until then, one token back at its end, never shortened', async () => {
      const c = check(key(), 10, 5); // one token every 100 ms
      expect(store.block).toBeDefined();
      const blocked = await store.block!({
        checks: [{ key: c.key, limit: c.limit, durationMs: 60_000 }],
        now: T0,
      });
      expect(blocked.decisions[0]).toMatchObject({ remaining: 0, resetMs: 60_400 });
      expect((await consume(T0 + 59_999, c)).decisions[0]).toMatchObject({
        allowed: false,
        retryAfterMs: 1,
      });
      // A shorter block does not shorten it.
      await store.block!({
        checks: [{ key: c.key, limit: c.limit, durationMs: 1000 }],
        now: T0 + 30_000,
      });
      expect((await consume(T0 + 59_999, c)).allowed).toBe(false);
      expect((await consume(T0 + 60_000, c)).decisions[0]).toMatchObject({
        allowed: true,
        remaining: 0,
      });
      expect((await consume(T0 + 60_000, c)).decisions[0]).toMatchObject({
        allowed: false,
        retryAfterMs: 100,
      });
      // Blocking a bucket never charged: empty from now.
      const fresh = check(key('fresh'), 10, 5);
      await store.block!({
        checks: [{ key: fresh.key, limit: fresh.limit, durationMs: 500 }],
        now: T0,
      });
      expect((await consume(T0 + 499, fresh)).allowed).toBe(false);
      expect((await consume(T0 + 500, fresh)).allowed).toBe(true);
    });

    it('a penalty (unlessBlocked) leaves a block being served as it is, to its last instant; after it, or once the bucket changed, it blocks', async () => {
      const c = check(key('tail'), 1, 2); // one token a second
      const penalty = (now: number, durationMs = 10_000) =>
        store.block!({
          checks: [{ key: c.key, limit: c.limit, durationMs }],
          now,
          unlessBlocked: true,
        });
      expect((await penalty(T0)).decisions[0]).toMatchObject({ resetMs: 11_000 });
      // In the block's last token interval the bucket looks like one just emptied: still the same block.
      expect((await penalty(T0 + 9_500)).decisions[0]).toMatchObject({ resetMs: 1_500 });
      expect((await penalty(T0 + 9_999)).decisions[0]).toMatchObject({ resetMs: 1_001 });
      expect((await consume(T0 + 10_000, c)).allowed).toBe(true);
      // Over the limit again after the block: a new block.
      expect((await consume(T0 + 10_000, c)).allowed).toBe(false);
      expect((await penalty(T0 + 10_000)).decisions[0]).toMatchObject({ resetMs: 11_000 });
      // A bucket reset during a block is not serving it any more.
      await store.reset({ checks: [c], now: T0 + 11_000 });
      expect((await consume(T0 + 11_000, c)).allowed).toBe(true);
      expect((await consume(T0 + 11_000, c)).allowed).toBe(true);
      expect((await penalty(T0 + 11_000)).decisions[0]).toMatchObject({ resetMs: 11_000 });
      // Without the flag (an operator's ban) a block always applies.
      const ban = await store.block!({
        checks: [{ key: c.key, limit: c.limit, durationMs: 20_000 }],
        now: T0 + 12_000,
      });
      expect(ban.decisions[0]).toMatchObject({ resetMs: 21_000 });
    });

    it('keeps keys apart, however alike, long or strange they are', async () => {
      const long = 'x'.repeat(10_000);
      const base = key();
      const variants = [
        base,
        `${base}{x}`,
        `${base}%7Bx%7D`,
        `${base}%257Bx%257D`,
        `${base}#x`,
        `${base}%23x`,
        `${base}\uD800`,
        `${base}\uDC00`,
        `${base}\uFFFD`,
        `${base}é`,
        `${base}%E9`,
        `${base}\u0000`,
        `${base}${long}a`,
        `${base}${long}b`,
      ];
      for (const k of variants) {
        expect((await consume(T0, check(k, 1, 1))).allowed).toBe(true);
      }
      for (const k of variants) {
        expect((await consume(T0, check(k, 1, 1))).allowed).toBe(false);
      }
      expect((await peek(T0, check(`${base}${long}c`, 1, 1))).decisions[0]).toMatchObject({
        remaining: 1,
      });
    });

    it('treats a bucket that is full again like a key never seen', async () => {
      const used = check(key('used'), 4, 3);
      await consume(T0, { ...used, cost: 3 });
      const later = T0 + 750; // exactly refilled
      const fresh = check(key('fresh'), 4, 3);
      expect(await peek(later, used)).toEqual(await peek(later, fresh));
      expect(await consume(later, { ...used, cost: 2 })).toEqual(
        await consume(later, { ...fresh, cost: 2 }),
      );
      expect(await consume(later + 5_000, used)).toEqual(await consume(later + 5_000, fresh));
    });

    it('handles fractional rates, costs and times exactly like the algorithm', async () => {
      const c = check(key(), 3, 3); // 333.33... ms per token
      const model = new ModelStore();
      const steps: [number, number][] = [
        [0, 1],
        [0, 1],
        [0, 1],
        [0, 1],
        [333.3333333333333, 1],
        [333.5, 1],
        [700.25, 0.5],
        [701, 0.5],
        [1001, 2],
      ];
      for (const [at, cost] of steps) {
        const request = { checks: [{ ...c, cost }], now: T0 + at };
        expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
      }
      const request = { checks: [bucket(c.key, 3, 3)], now: T0 + 1500.125 };
      expect(await store.peek(request)).toEqual(approximately(model.peek(request)));
    });

    it('clamps time that goes backwards: no refill, no negative bucket', async () => {
      const c = check(key(), 10, 5);
      const model = new ModelStore();
      for (const at of [1_000, 1_000, 1_000, 0, -5_000, 1_050, 1_050, 1_050, 1_050]) {
        const request = { checks: [c], now: T0 + at };
        expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
      }
    });

    it('reads the rate and burst on every decision (limits that change)', async () => {
      const k = key();
      const model = new ModelStore();
      const steps: [number, number, number][] = [
        [0, 10, 5],
        [0, 10, 5],
        [0, 10, 5],
        [100, 1, 5],
        [100, 1, 2],
        [100, 100, 2],
        [250, 0.5, 1],
        [3_000, 0.5, 1],
      ];
      for (const [at, rate, burst] of steps) {
        const request = { checks: [check(k, rate, burst)], now: T0 + at };
        expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
      }
    });

    it('reports itself up, when it implements health(), while its backend answers', async () => {
      if (store.health === undefined) return;
      const health = await store.health({ timeoutMs: 1_000 });
      expect(health.status).toBe('up');
      expect(typeof health.store).toBe('string');
      expect(health.error).toBeUndefined();
    });

    describeSettlementCases({ it, expect, store: () => store, key, T0 });

    it('agrees with the algorithm on a long randomized sequence', async () => {
      const random = seededRandom(20_240_601);
      const limits = [
        { rate: 1, burst: 1 },
        { rate: 3, burst: 3 },
        { rate: 0.7, burst: 2 },
        { rate: 1000 / 3, burst: 7 },
        { rate: 50, burst: 20 },
      ].map(({ rate, burst }) => tokenBucket(rate, burst));
      const keys = limits.map((_, i) => key(`r${i}`));
      const model = new ModelStore();
      let now = T0;
      for (let step = 0; step < 150; step++) {
        now += Math.floor(random() * 4) === 0 ? 0 : random() * 400;
        const picks = limits.map((_, i) => i).filter(() => random() < 0.5);
        if (picks.length === 0) picks.push(step % limits.length);
        const checks = picks.map((i) => ({
          key: keys[i]!,
          limit: limits[i]!,
          cost: random() < 0.2 ? Math.round(random() * 40) / 10 + 0.1 : 1,
        }));
        const action = random();
        if (action < 0.85) {
          const request = { checks, now };
          expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
        } else if (action < 0.95) {
          const request = { checks: checks.map(({ cost: _, ...rest }) => rest), now };
          expect(await store.peek(request)).toEqual(approximately(model.peek(request)));
        } else {
          const request = { checks: checks.map(({ cost: _, ...rest }) => rest), now };
          await store.reset(request);
          model.reset(request);
        }
      }
    });
  });
}
