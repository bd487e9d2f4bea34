/**
 * A key's first sighting within `leaseTtlMs` is RedisStore's own call and
 * leaves no local state (`KeyTable.firstSighting`): what the local tier
 * still owes such a request, a denial cached and a failure decided by the
 * local fallback, and the state a key gets from its second sighting on.
 */
import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  ConsumeRequest,
  ConsumeResult,
  MaybePromise,
} from '../../lib/store/rate-limit-store.interface.js';
import { check } from '../../test/utils/checks.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { twoTierFixture } from '../../test/utils/two-tier-fixture.js';
import type { TwoTierStore } from './index.js';

const T0 = 1_700_000_000_000;
const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as { then?: unknown })?.then === 'function';

describe('TwoTierStore: first sightings', () => {
  const redis = twoTierFixture('first-sighting');

  it('keeps no local state for keys seen once; a key seen again within leaseTtlMs is tracked, and leased once hot', async () => {
    const store = redis.store();
    for (let i = 0; i < 200; i++) {
      expect(
        await store.consume({ checks: [check(`once:${i}`, 1, 100)], now: T0 + i }),
      ).toMatchObject({ allowed: true });
    }
    expect(store.stats()).toMatchObject({ decisions: 200, redisCalls: 200, localKeys: 0 });
    // Seen again 500 ms later (within leaseTtlMs, 1 s): tracked from now on.
    expect(await store.consume({ checks: [check('once:0', 1, 100)], now: T0 + 500 })).toMatchObject(
      {
        allowed: true,
        decisions: [{ remaining: 98 }],
      },
    );
    expect(store.stats().localKeys).toBe(1);
    // Its first sighting counts towards its demand: a few more requests and it takes a lease.
    for (let i = 0; i < 10; i++)
      await store.consume({ checks: [check('once:0', 1, 100)], now: T0 + 501 + i });
    expect(store.stats().leasesTaken).toBeGreaterThan(0);
  });

  it('caches a denial Redis gives a first sighting: the next request is denied locally, without a call', async () => {
    const c = check('drained', 1, 2);
    // Another instance drained the bucket.
    await redis.redisStore().consume({ checks: [{ ...c, cost: 2 }], now: T0 });
    const store = redis.store();
    const denied = await store.consume({ checks: [c], now: T0 });
    expect(denied).toEqual({
      allowed: false,
      decisions: [
        { allowed: false, remaining: 0, retryAfterMs: 1_000, resetMs: 2_000, reason: 'limit' },
      ],
    });
    const calls = store.stats().redisCalls;
    const again = store.consume({ checks: [c], now: T0 + 300 });
    expect(isPromise(again)).toBe(false);
    expect((again as ConsumeResult).decisions[0]).toEqual({
      allowed: false,
      remaining: 0,
      retryAfterMs: 700,
      resetMs: 1_700,
      reason: 'limit',
    });
    expect(store.stats()).toMatchObject({ redisCalls: calls, denyCacheHits: 1, localKeys: 1 });
    expect(await store.consume({ checks: [c], now: T0 + 1_000 })).toMatchObject({ allowed: true });
  });

  it('is all or nothing across the checks of a first sighting, in one script call', async () => {
    const wide = check('wide', 100, 100);
    const narrow = check('narrow', 1, 2);
    await redis.redisStore().consume({ checks: [{ ...narrow, cost: 2 }], now: T0 });
    const store = redis.store();
    const answer = await store.consume({ checks: [wide, narrow], now: T0 });
    expect(answer).toMatchObject({
      allowed: false,
      decisions: [{ allowed: true }, { allowed: false, reason: 'limit' }],
    });
    expect(store.stats().redisCalls).toBe(1);
    // wide was not charged.
    expect((await store.redisStore.peek({ checks: [wide], now: T0 })).decisions[0]).toMatchObject({
      remaining: 100,
    });
  });

  it('denies a cost above the burst locally, without a call, as for a key it tracks', () => {
    const store = redis.store();
    const answer = store.consume({ checks: [check('tiny', 1, 1, 2)], now: T0 });
    expect(isPromise(answer)).toBe(false);
    expect((answer as ConsumeResult).decisions[0]).toMatchObject({
      allowed: false,
      reason: 'cost-exceeds-burst',
    });
    expect(store.stats().redisCalls).toBe(0);
  });

  it("fails a first sighting as any Redis call: RateLimitStoreError, then decided once by the local fallback (failMode 'local')", async () => {
    const own = await connectSharedClient();
    const store = redis.store({ client: own, instances: 2 });
    own.disconnect();
    const request = { checks: [check('new', 10, 10)], now: T0 };
    await expect(store.consume(request)).rejects.toThrow(RateLimitStoreError);
    const local = consumeOrFallBack(store, { checks: [check('new', 10, 10)], now: T0 });
    expect(isPromise(local)).toBe(true); // asked Redis first (not yet degraded), then fell back
    expect(await local).toEqual({
      allowed: true,
      decisions: [{ allowed: true, remaining: 4, retryAfterMs: 0, resetMs: 200 }],
    });
    expect(store.stats()).toMatchObject({
      decisions: 2,
      degraded: true,
      fallbacks: 1,
      fallbackDecisions: 1,
    });
  });
});

/** What the module does with a request whose `failMode` is `'local'` (see `RateLimiter.evaluate`). */
function consumeOrFallBack(
  store: TwoTierStore,
  request: ConsumeRequest,
): MaybePromise<ConsumeResult> {
  const local = store.localFallback;
  if (local.active) return local.consumeLocally(request);
  const answer = store.consume(request);
  return isPromise(answer) ? answer.catch(() => local.consumeLocally(request)) : answer;
}
