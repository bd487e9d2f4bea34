/**
 * The store contract's settlement cases (`RateLimitStore.settle`, optional):
 * registered by `describeStoreContract` beside the others, skipped for a
 * store without `settle` (the module refuses `settle` with such a store at
 * start-up). Kept apart so that the main suite stays readable.
 */
import type {
  RateLimitCheck,
  SettleCheck,
  TokenBucketLimit,
} from '../rate-limit-store.interface.js';
import type { ContractCaseContext } from './case-context.js';

/** What the cases need from the suite that registers them. @internal */
export type SettlementCaseContext = ContractCaseContext;

const bucket = (rate: number, burst: number): TokenBucketLimit => ({
  algorithm: 'token-bucket',
  rate,
  burst,
});

/** Registers the settlement cases. @internal */
export function describeSettlementCases(ctx: SettlementCaseContext): void {
  const { it, expect, key, T0 } = ctx;
  const consume = async (now: number, check: RateLimitCheck) =>
    ctx.store().consume({ checks: [check], now });
  const settle = async (now: number, check: RateLimitCheck, delta: number) => {
    const settled: SettleCheck = {
      key: check.key,
      limit: check.limit as TokenBucketLimit,
      delta,
    };
    return ctx.store().settle!({ checks: [settled], now });
  };
  /** The store settles, or the case has nothing to check (the capability is optional). */
  const settles = () => ctx.store().settle !== undefined;

  it('settles a lower actual as a refund (never past full) and a higher one as debt, which the next request waits out', async () => {
    if (!settles()) return;
    const c: RateLimitCheck = { key: key('settle'), limit: bucket(10, 5), cost: 3 }; // one token every 100 ms
    expect((await consume(T0, c)).decisions[0]).toMatchObject({ allowed: true, remaining: 2 });
    // Reserved 3, spent 2: one back.
    expect(await settle(T0, c, -1)).toEqual({
      allowed: true,
      decisions: [{ allowed: true, remaining: 3, retryAfterMs: 0, resetMs: 200 }],
    });
    // Spent 6 more than that: 2 tokens left, 4 into debt (300 ms past empty).
    const inDebt = await settle(T0, c, 6);
    expect(inDebt.allowed).toBe(true);
    expect(inDebt.decisions[0]).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 300,
      resetMs: 800,
    });
    const one = { ...c, cost: 1 };
    expect((await consume(T0 + 399, one)).decisions[0]).toMatchObject({
      allowed: false,
      retryAfterMs: 1,
    });
    expect((await consume(T0 + 400, one)).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 0,
    });
  });

  it('settles never fuller than full, and charges a bucket never seen from full', async () => {
    if (!settles()) return;
    const c: RateLimitCheck = { key: key('full'), limit: bucket(10, 5), cost: 2 };
    await consume(T0, c);
    expect((await settle(T0, c, -50)).decisions[0]).toMatchObject({ remaining: 5, resetMs: 0 });
    const one = { ...c, cost: 1 };
    for (let i = 0; i < 5; i++) expect((await consume(T0, one)).allowed).toBe(true);
    expect((await consume(T0, one)).allowed).toBe(false);
    // A bucket never charged: refunding leaves it full; charging 7 puts it 2 tokens into debt.
    const fresh: RateLimitCheck = { key: key('fresh'), limit: bucket(10, 5), cost: 1 };
    expect((await settle(T0, fresh, -3)).decisions[0]).toMatchObject({ remaining: 5 });
    expect((await settle(T0, fresh, 7)).decisions[0]).toMatchObject({
      allowed: false,
      retryAfterMs: 200,
      resetMs: 700,
    });
    expect((await consume(T0 + 299, fresh)).allowed).toBe(false);
    expect((await consume(T0 + 300, fresh)).allowed).toBe(true);
  });

  it('settles reservations on one key exactly, concurrent settlements included: 10 of 20 admitted, 5 more after their refunds, debt after their overspend', async () => {
    if (!settles()) return;
    // 100 tokens a second (10 ms each), a budget of 1,000; every request estimates 100.
    const c: RateLimitCheck = { key: key('budget'), limit: bucket(100, 1000), cost: 100 };
    // Admissions one after another (a local tier may under-admit a burst of
    // concurrent first requests, never over-admit: see the stores' own
    // multi-process specs); the settlements all at once.
    const admitted = async (now: number) => {
      let count = 0;
      for (let i = 0; i < 20; i++) if ((await consume(now, c)).allowed) count++;
      return count;
    };
    expect(await admitted(T0)).toBe(10);
    // Each of the 10 spent 50: 500 back, which admits 5 more at once.
    await Promise.all(Array.from({ length: 10 }, () => settle(T0, c, -50)));
    expect(await admitted(T0)).toBe(5);
    // Those 5 spent 150 each: 250 of debt, repaid in 2.5 s at 100/s; a request of
    // 100 then waits 3.5 s. (Seen by peek: a local tier may hold a hot key's
    // denial longer than the bucket's wait, never shorter.)
    await Promise.all(Array.from({ length: 5 }, () => settle(T0, c, 50)));
    const peeked = await ctx.store().peek({ checks: [{ key: c.key, limit: c.limit }], now: T0 });
    expect(peeked.decisions[0]).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 2500,
      resetMs: 12_500,
    });
    expect((await consume(T0 + 3499, c)).allowed).toBe(false);
  });
}
