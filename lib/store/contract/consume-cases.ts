/**
 * The store contract's `consume` cases: a burst and its exact wait, refill,
 * costs, all or nothing, every denying check reported.
 */
import { contractHelpers, type ContractCaseContext } from './case-context.js';

/** Registers them. @internal */
export function describeConsumeCases(ctx: ContractCaseContext): void {
  const { it, expect, store, key, T0 } = ctx;
  const { check, consume, peek } = contractHelpers(store);

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
    expect(await store().consume({ checks: [], now: T0 })).toEqual({
      allowed: true,
      decisions: [],
    });
    expect(await store().peek({ checks: [], now: T0 })).toEqual({ allowed: true, decisions: [] });
    await store().reset({ checks: [], now: T0 });
  });
}
