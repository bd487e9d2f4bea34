/**
 * The store contract for the window algorithms, one suite per algorithm
 * (fixed, sliding, calendar-aligned fixed), for stores that support them, next
 * to the token-bucket contract (`store-contract.ts`). Time is passed as `now`
 * (client time for Redis), keys are random: nothing sleeps, nothing is shared.
 */
import { randomUUID } from 'node:crypto';
import { seededRandom } from '../../adaptive/seeded-random.js';
import type {
  RateLimitCheck,
  RateLimitStore,
  StoreLimit,
  WindowLimit,
} from '../rate-limit-store.interface.js';
import { anchoredWindowCases } from './anchored-window-contract.js';
import { approximatelyWith } from './approximately.js';
import { contractFramework } from './framework.js';
import { ModelStore } from './model-store.js';
import { tokenBucket } from './case-context.js';
import type { StoreContractOptions } from './store-contract.js';

/** A multiple of every window below (60 s, and the day: 1_700_006_400_000 is a UTC midnight). */
const T0 = 1_700_006_400_000;
const MINUTE = 60_000;

const LIMITS: readonly (readonly [string, WindowLimit])[] = [
  ['fixed-window', { algorithm: 'fixed-window', quota: 5, windowMs: MINUTE }],
  [
    'fixed-window anchored at the first hit',
    { algorithm: 'fixed-window', quota: 5, windowMs: MINUTE, anchor: 'first-hit' },
  ],
  ['sliding-window', { algorithm: 'sliding-window', quota: 5, windowMs: MINUTE }],
  [
    'fixed-window on calendar days (Europe/Paris)',
    {
      algorithm: 'fixed-window',
      quota: 5,
      windowMs: 86_400_000,
      calendar: { unit: 'day', timeZone: 'Europe/Paris' },
    },
  ],
];

/** Registers the window scenarios under `describe(name)`, one block per algorithm. */
export function describeWindowStoreContract(
  name: string,
  makeStore: () => RateLimitStore | Promise<RateLimitStore>,
  options: StoreContractOptions = {},
): void {
  const { describe, it, beforeEach, afterEach, expect } = contractFramework(
    options.framework,
    'describeWindowStoreContract',
  );
  const approximately = approximatelyWith.bind(undefined, expect);
  for (const [label, limit] of LIMITS) describeWindow(label, limit);

  function describeWindow(label: string, limit: WindowLimit): void {
    describe(`${name} (window contract: ${label})`, () => {
      let store: RateLimitStore;
      const key = (label = 'w') => `window-contract:${label}:${randomUUID()}`;
      const check = (k: string, cost = 1, bucket: StoreLimit = limit): RateLimitCheck => ({
        key: k,
        limit: bucket,
        cost,
      });
      const consume = async (now: number, ...checks: RateLimitCheck[]) =>
        store.consume({ checks, now });
      const peek = async (now: number, ...checks: RateLimitCheck[]) =>
        store.peek({ checks: checks.map(({ key: k, limit: l }) => ({ key: k, limit: l })), now });

      beforeEach(async () => {
        store = await makeStore();
      });

      afterEach(async () => {
        await (options.teardown ? options.teardown(store) : store.close());
      });

      it('admits exactly the quota, then denies until retryAfterMs, not 1 ms less', async () => {
        const c = check(key());
        const at = T0 + 1000;
        for (let i = 0; i < 5; i++)
          expect((await consume(at, c)).decisions[0]).toMatchObject({
            allowed: true,
            remaining: 4 - i,
            retryAfterMs: 0,
          });
        const denied = (await consume(at, c)).decisions[0]!;
        expect(denied).toMatchObject({ allowed: false, reason: 'limit', remaining: 0 });
        expect(denied.retryAfterMs).toBeGreaterThan(0);
        expect((await consume(at + Math.floor(denied.retryAfterMs) - 1, c)).allowed).toBe(false);
        expect((await consume(at + Math.ceil(denied.retryAfterMs), c)).allowed).toBe(true);
      });

      it('never admits a cost above the quota, and charges nothing for it', async () => {
        const c = check(key(), 6);
        expect((await consume(T0, c)).decisions[0]).toMatchObject({
          allowed: false,
          reason: 'cost-exceeds-burst',
          retryAfterMs: Infinity,
        });
        expect((await peek(T0, c)).decisions[0]).toMatchObject({ allowed: true, remaining: 5 });
      });

      it('mixed algorithms in one request: all or nothing', async () => {
        const bucket = check(key('tb'), 1, tokenBucket(1, 5));
        const window = check(key('win'));
        const other: StoreLimit =
          limit.algorithm === 'sliding-window'
            ? { algorithm: 'fixed-window', quota: 2, windowMs: MINUTE }
            : { algorithm: 'sliding-window', quota: 2, windowMs: MINUTE };
        const third = check(key('other'), 1, other);
        expect((await consume(T0, window, bucket, third)).allowed).toBe(true);
        // The window is full after 4 more: the next request is denied by it alone, and charges nothing anywhere.
        expect((await consume(T0, check(window.key, 4))).allowed).toBe(true);
        const denied = await consume(T0, bucket, third, window);
        expect(denied.allowed).toBe(false);
        expect(denied.decisions.map((d) => d.allowed)).toEqual([true, true, false]);
        expect((await peek(T0, bucket, third)).decisions.map((d) => d.remaining)).toEqual([4, 1]);
      });

      it('peeks without charging, refunds into the window, resets', async () => {
        const c = check(key());
        await consume(T0, check(c.key, 3));
        expect((await peek(T0 + 10, c)).decisions[0]).toMatchObject({
          allowed: true,
          remaining: 2,
        });
        expect((await peek(T0 + 10, c)).decisions[0]).toMatchObject({
          allowed: true,
          remaining: 2,
        });
        expect(
          (await store.refund({ checks: [check(c.key, 2)], now: T0 + 20 })).decisions[0],
        ).toMatchObject({ remaining: 4 });
        expect(
          (await store.refund({ checks: [check(c.key, 9)], now: T0 + 20 })).decisions[0],
        ).toMatchObject({ remaining: 5 });
        await consume(T0 + 30, check(c.key, 5));
        expect((await consume(T0 + 30, c)).allowed).toBe(false);
        await store.reset({ checks: [{ key: c.key, limit }], now: T0 + 40 });
        expect((await consume(T0 + 40, c)).decisions[0]).toMatchObject({
          allowed: true,
          remaining: 4,
        });
      });

      it('refuses to block a window (blockDuration is refused at start-up)', async () => {
        // Anchored windows are blocked as throttler blocks (anchored-window-contract.ts).
        if (store.block === undefined || isAnchored(limit)) return;
        await expect(async () =>
          store.block!({ checks: [{ key: key(), limit, durationMs: 1000 }], now: T0 }),
        ).rejects.toThrow(/not supported|block/);
      });

      if (isAnchored(limit))
        anchoredWindowCases({ describe, it, beforeEach, afterEach, expect }, () => store);

      it('keeps a window apart from a token bucket of the same key', async () => {
        const k = key();
        await consume(T0, check(k, 5));
        expect((await consume(T0, check(`${k}-tb`, 1, tokenBucket(1, 1)))).allowed).toBe(true);
        expect((await consume(T0, check(k))).allowed).toBe(false);
      });

      it('agrees with the pure functions on a long random sequence (clock going back included)', async () => {
        const model = new ModelStore();
        const random = seededRandom(0x5eed);
        const keys = [key('a'), key('b')];
        let now = T0;
        for (let i = 0; i < 300; i++) {
          now += random() < 0.05 ? -Math.floor(random() * 5000) : Math.floor(random() * 3000);
          const checks = keys
            .filter(() => random() < 0.7)
            .map((k) => check(k, 1 + Math.floor(random() * 3)));
          const request = { checks, now };
          const result = await store.consume(request);
          expect({ i, result }).toEqual({ i, result: approximately(model.consume(request)) });
        }
      });
    });
  }
}

function isAnchored(limit: WindowLimit): boolean {
  return limit.algorithm === 'fixed-window' && limit.anchor === 'first-hit';
}
