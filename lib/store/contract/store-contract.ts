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
import type { RateLimitStore } from '../rate-limit-store.interface.js';
import { approximatelyWith } from './approximately.js';
import { contractFramework, type StoreContractFramework } from './framework.js';
import { ModelStore } from './model-store.js';
import { describeBucketChangeCases } from './bucket-change-cases.js';
import { bucket, contractHelpers, tokenBucket } from './case-context.js';
import { describeConsumeCases } from './consume-cases.js';
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
    const { check, consume, peek } = contractHelpers(() => store);

    beforeEach(async () => {
      store = await makeStore();
    });

    afterEach(async () => {
      await (options.teardown ? options.teardown(store) : store.close());
    });

    const cases = { it, expect, store: () => store, key, T0 };
    describeConsumeCases(cases);
    describeBucketChangeCases(cases);

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

    describeSettlementCases(cases);

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
