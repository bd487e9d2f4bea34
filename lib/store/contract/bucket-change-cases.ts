/**
 * The store contract's cases of the operations besides `consume`: `peek`
 * (charges nothing), `reset` (the listed buckets only), `refund` (never past
 * full) and `block` (a penalty, and `unlessBlocked`).
 */
import { bucket, contractHelpers, type ContractCaseContext } from './case-context.js';

/** Registers them. @internal */
export function describeBucketChangeCases(ctx: ContractCaseContext): void {
  const { it, expect, store, key, T0 } = ctx;
  const { check, consume, peek } = contractHelpers(store);

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
    await store().reset({ checks: [bucket(a.key, 1, 2)], now: T0 });
    expect((await peek(T0, a, b)).decisions.map((d) => d.remaining)).toEqual([2, 0]);
    expect((await consume(T0, a)).decisions[0]).toMatchObject({ allowed: true, remaining: 1 });
    expect((await consume(T0, b)).allowed).toBe(false);
    await store().reset({ checks: [bucket(key('never-seen'), 1, 2)], now: T0 });
  });

  it('refunds tokens, never past a full bucket, and answers the bucket as it is afterwards', async () => {
    const c = check(key(), 10, 5); // one token every 100 ms
    for (let i = 0; i < 5; i++) await consume(T0, c);
    expect(await store().refund({ checks: [{ ...c, cost: 2 }], now: T0 })).toEqual({
      allowed: true,
      decisions: [{ allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 300 }],
    });
    expect((await consume(T0, c)).decisions[0]).toMatchObject({ allowed: true, remaining: 1 });
    // More than was taken: full, not fuller.
    expect(
      (await store().refund({ checks: [{ ...c, cost: 50 }], now: T0 })).decisions[0],
    ).toMatchObject({ remaining: 5, resetMs: 0 });
    for (let i = 0; i < 5; i++) expect((await consume(T0, c)).allowed).toBe(true);
    expect((await consume(T0, c)).allowed).toBe(false);
    // A bucket never charged stays full.
    expect(
      (await store().refund({ checks: [check(key('never-seen'), 10, 5, 3)], now: T0 }))
        .decisions[0],
    ).toMatchObject({ remaining: 5 });
  });

  it('blocks a bucket for a duration (a penalty): empty until then, one token back at its end, never shortened', async () => {
    const c = check(key(), 10, 5); // one token every 100 ms
    expect(store().block).toBeDefined();
    const blocked = await store().block!({
      checks: [{ key: c.key, limit: c.limit, durationMs: 60_000 }],
      now: T0,
    });
    expect(blocked.decisions[0]).toMatchObject({ remaining: 0, resetMs: 60_400 });
    expect((await consume(T0 + 59_999, c)).decisions[0]).toMatchObject({
      allowed: false,
      retryAfterMs: 1,
    });
    // A shorter block does not shorten it.
    await store().block!({
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
    await store().block!({
      checks: [{ key: fresh.key, limit: fresh.limit, durationMs: 500 }],
      now: T0,
    });
    expect((await consume(T0 + 499, fresh)).allowed).toBe(false);
    expect((await consume(T0 + 500, fresh)).allowed).toBe(true);
  });

  it('a penalty (unlessBlocked) leaves a block being served as it is, to its last instant; after it, or once the bucket changed, it blocks', async () => {
    const c = check(key('tail'), 1, 2); // one token a second
    const penalty = (now: number, durationMs = 10_000) =>
      store().block!({
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
    await store().reset({ checks: [c], now: T0 + 11_000 });
    expect((await consume(T0 + 11_000, c)).allowed).toBe(true);
    expect((await consume(T0 + 11_000, c)).allowed).toBe(true);
    expect((await penalty(T0 + 11_000)).decisions[0]).toMatchObject({ resetMs: 11_000 });
    // Without the flag (an operator's ban) a block always applies.
    const ban = await store().block!({
      checks: [{ key: c.key, limit: c.limit, durationMs: 20_000 }],
      now: T0 + 12_000,
    });
    expect(ban.decisions[0]).toMatchObject({ resetMs: 21_000 });
  });
}
