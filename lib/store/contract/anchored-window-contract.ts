/**
 * The store contract for fixed windows anchored at their first hit
 * (`anchor: 'first-hit'`, `@nestjs/throttler`'s windows, the throttler
 * compat entry point's): where a window starts, and its block
 * (`anchoredWindowBlock`: full until the block ends, a retry during a block
 * leaving it alone under `unlessBlocked`). Registered by
 * `describeWindowStoreContract`, so memory, Redis (standalone and Cluster)
 * and two-tier stores run the same cases.
 */
import { randomUUID } from 'node:crypto';
import type {
  FixedWindowLimit,
  RateLimitCheck,
  RateLimitStore,
  StoreLimit,
} from '../rate-limit-store.interface.js';
import type { StoreContractFramework } from './framework.js';
import { tokenBucket } from './case-context.js';

const T0 = 1_700_006_400_000;
const ANCHORED: FixedWindowLimit = {
  algorithm: 'fixed-window',
  quota: 3,
  windowMs: 10_000,
  anchor: 'first-hit',
};

/** Registers the anchored-window cases; `store()` is the store of the running test. */
export function anchoredWindowCases(
  framework: StoreContractFramework,
  store: () => RateLimitStore,
): void {
  const { it, expect } = framework;
  const key = () => `anchored-contract:${randomUUID()}`;
  const check = (k: string, cost = 1, limit: StoreLimit = ANCHORED): RateLimitCheck => ({
    key: k,
    limit,
    cost,
  });
  const consume = async (now: number, ...checks: RateLimitCheck[]) =>
    store().consume({ checks, now });
  const block = async (
    now: number,
    durationMs: number,
    unlessBlocked: boolean,
    ...keys: string[]
  ) =>
    store().block!({
      checks: keys.map((k) => ({ key: k, limit: ANCHORED, durationMs })),
      now,
      unlessBlocked,
    });

  it('anchored window: starts at the first hit, not on an epoch multiple', async () => {
    const c = check(key());
    const first = T0 + 7_001; // 7 s into an aligned 10 s window
    expect((await consume(first, c)).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 2,
      effectiveWindowMs: 10_000,
    });
    await consume(first + 1_000, check(c.key, 2));
    const denied = (await consume(first + 9_999, c)).decisions[0]!;
    expect(denied).toMatchObject({ allowed: false, reason: 'limit', retryAfterMs: 1 });
    // The aligned window would have ended at T0 + 10 000; this one ends 10 s after its first hit.
    expect((await consume(first + 10_000, c)).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 2,
      effectiveWindowMs: 10_000,
    });
  });

  it('anchored window: a block keeps it full until the block ends, then a fresh window', async () => {
    if (store().block === undefined) return;
    const c = check(key());
    await consume(T0, check(c.key, 3));
    expect((await consume(T0 + 100, c)).allowed).toBe(false);
    const blocked = (await block(T0 + 100, 60_000, true, c.key)).decisions[0]!;
    expect(blocked).toMatchObject({ remaining: 0, effectiveWindowMs: 60_000 });
    // Past the window's own end, still blocked.
    const during = (await consume(T0 + 30_000, c)).decisions[0]!;
    expect(during).toMatchObject({ allowed: false, retryAfterMs: 30_100 });
    expect((await consume(T0 + 60_099, c)).allowed).toBe(false);
    expect((await consume(T0 + 60_100, c)).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 2,
      effectiveWindowMs: 10_000,
    });
  });

  it('anchored window: unlessBlocked leaves a running block alone; without it the block starts over', async () => {
    if (store().block === undefined) return;
    const k = key();
    await block(T0, 5_000, true, k);
    // A retry near the block's end is no new abuse: the block keeps its end.
    const kept = (await block(T0 + 4_000, 5_000, true, k)).decisions[0]!;
    expect(kept).toMatchObject({ remaining: 0, effectiveWindowMs: 1_000 });
    expect((await consume(T0 + 5_000, check(k))).allowed).toBe(true);
    // An operator's block applies whatever runs.
    await block(T0 + 6_000, 5_000, true, k);
    const again = (await block(T0 + 7_000, 5_000, false, k)).decisions[0]!;
    expect(again).toMatchObject({ remaining: 0, effectiveWindowMs: 5_000 });
    expect((await consume(T0 + 11_999, check(k))).allowed).toBe(false);
    expect((await consume(T0 + 12_000, check(k))).allowed).toBe(true);
  });

  it('anchored window: a block shorter than what was left of the window ends the window with it', async () => {
    if (store().block === undefined) return;
    const c = check(key());
    await consume(T0, check(c.key, 3));
    await block(T0 + 1_000, 500, true, c.key);
    expect((await consume(T0 + 1_499, c)).allowed).toBe(false);
    expect((await consume(T0 + 1_500, c)).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 2,
    });
  });

  it('anchored window and token bucket blocked in one request: each in its place', async () => {
    if (store().block === undefined) return;
    const window = key();
    const bucket = key();
    const answer = await store().block!({
      checks: [
        { key: bucket, limit: tokenBucket(1, 5), durationMs: 2_000 },
        { key: window, limit: ANCHORED, durationMs: 3_000 },
      ],
      now: T0,
      unlessBlocked: true,
    });
    expect(answer.allowed).toBe(false);
    expect(answer.decisions[0]).toMatchObject({ remaining: 0 });
    expect(answer.decisions[1]).toMatchObject({ remaining: 0, effectiveWindowMs: 3_000 });
    expect((await consume(T0 + 1_000, check(bucket, 1, tokenBucket(1, 5)))).allowed).toBe(false);
    expect((await consume(T0 + 2_999, check(window))).allowed).toBe(false);
    expect((await consume(T0 + 3_000, check(window))).allowed).toBe(true);
  });
}
