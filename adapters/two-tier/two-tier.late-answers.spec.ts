/**
 * Answers read late: a stalled event loop, or a Redis that stalled, hands a
 * lease call's answer over long after its requests arrived. Neither the
 * requests that waited on it nor the fleet epoch it carries may read that
 * wait as if the bucket had been spent or its state lost (a CI run of
 * `two-tier.hot-start.spec.ts` on a loaded machine: 68 requests denied with
 * the bucket nearly full).
 */
import { ManualClock } from '../../lib/clock.js';
import type { ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import { check } from '../../test/utils/checks.js';
import { twoTierFixture } from '../../test/utils/two-tier-fixture.js';
import { redisKey } from '../redis/redis-keys.js';

const T0 = 1_700_000_000_000;
const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as { then?: unknown })?.then === 'function';

describe('TwoTierStore, answers read late', () => {
  const redis = twoTierFixture('two-tier-late');
  const makeStore = redis.store.bind(redis);

  it('decides a request that waited for a call in flight no earlier than the requests that spent the lease meanwhile', async () => {
    // CI (hot-start spec, loaded machine): a call answered over a second late (event loop or Redis
    // stalled); a request that arrived after the stall spent the new lease at its own `now` before the
    // requests waiting on the call were decided again, at theirs, from before it: the view then
    // read more than the whole burst as debt, and they were denied with the bucket nearly full.
    const clock = new ManualClock(T0); // leases timed by the test, not by a loaded machine
    const store = makeStore({ clock });
    const c = check('late', 1_000, 1_000);
    for (let i = 0; i < 20; i++) await store.consume({ checks: [c], now: T0 }); // hot: a lease target
    // Dearer than any lease (at most 250 here): a call, which the next request waits for.
    const first = store.consume({ checks: [check('late', 1_000, 1_000, 300)], now: T0 });
    expect(isPromise(first)).toBe(true);
    let later: ConsumeResult | Promise<ConsumeResult> | undefined;
    // Answered 1.2 s after those requests arrived: one arriving then spends the lease first.
    void Promise.resolve(first).then(() => {
      later = store.consume({ checks: [c], now: T0 + 1_200 });
    });
    const waiting = store.consume({ checks: [c], now: T0 });
    expect(isPromise(waiting)).toBe(true);
    expect((await first).allowed).toBe(true);
    expect(isPromise(later)).toBe(false); // from the lease
    expect((await later)!.allowed).toBe(true);
    expect((await waiting).decisions[0]).toMatchObject({ allowed: true });
  });

  it('dates a fleet epoch from its call, not from its answer: an answer read late does not make a live set of one that expired', async () => {
    // A hot key's lease calls count a fleet (issue 29) and answer the bucket's epoch, told back
    // while recent; a set gone under a told epoch is a lost state, and Redis takes the bucket as
    // empty. The set expires a window (2 x leaseTtlMs) after Redis wrote it; an answer read 2.5 s
    // late (a stalled event loop) was dated from the reading, and the epoch told after the set expired.
    const clock = new ManualClock(T0);
    const store = makeStore({ clock });
    const c = check('epoch', 1_000, 1_000);
    for (let i = 0; i < 20; i++) await store.consume({ checks: [c], now: T0 });
    const dear = check('epoch', 1_000, 1_000, 300); // more than any lease: a call
    const call = store.consume({ checks: [dear], now: T0 });
    expect(isPromise(call)).toBe(true);
    clock.set(T0 + 2_500); // the answer is read 2.5 s after the call was sent...
    expect((await call).allowed).toBe(true);
    await redis.client.del(`${redisKey(redis.prefix, 'epoch')}:fleet`); // ...when the set had expired
    const next = await store.consume({ checks: [dear], now: T0 + 2_500 });
    expect(next.decisions[0]).toMatchObject({ allowed: true });
  });
});
