/**
 * Joining a fleet (issue 29, `fleet-asks.ts`, `scripts/fleet.lua.ts`): with
 * `instances > 1`, a key's first call asks to join its bucket's fleet. An
 * instance meeting a key other instances lease already is served from a
 * lease after that one call; a key nobody leases (cold, per-user) gets no
 * lease and leaves nothing in Redis but its bucket. The shared redis-server;
 * time from each request's `now` and a fixed store clock.
 */
import { ManualClock } from '../../lib/clock.js';
import type { ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import { check } from '../../test/utils/checks.js';
import { twoTierFixture } from '../../test/utils/two-tier-fixture.js';
import { redisKey } from '../redis/redis-keys.js';

const T0 = 1_700_000_000_000;

describe('TwoTierStore: joining a fleet', () => {
  const redis = twoTierFixture('fleet-join', { clock: { now: () => 0 } });
  // The fleet set expires in Redis' real time, 2 x leaseTtlMs after its last write (the default
  // 1 s: 2 s, which a loaded machine can stall past between the leader's calls and the joiner's).
  // The store clock stands still, so a longer lease changes nothing else here.
  const makeStore = (instances: number) => redis.store({ instances, leaseTtlMs: 10_000 });
  const hot = check('hot', 1_000, 1_000);

  it("serves an instance's second request from a lease when the fleet leases the key already", async () => {
    const leader = makeStore(2);
    for (let i = 0; i < 40; i++) await leader.consume({ checks: [hot], now: T0 + i });
    expect(leader.stats().leasesTaken).toBeGreaterThan(0);
    const joiner = makeStore(2);
    // Its first sighting: one call, which comes back with a lease.
    expect(await joiner.consume({ checks: [hot], now: T0 + 40 })).toMatchObject({ allowed: true });
    expect(joiner.stats()).toMatchObject({ redisCalls: 1, leasesTaken: 1 });
    // The next ones are local (synchronous answers), no call.
    for (let i = 0; i < 5; i++) {
      const answer = joiner.consume({ checks: [hot], now: T0 + 41 }) as ConsumeResult;
      expect(answer.allowed).toBe(true);
    }
    expect(joiner.stats()).toMatchObject({ redisCalls: 1, localDecisions: 5 });
  });

  it("owes a joiner's expired lease to its next call (the pace's give-back), not to a call of its own", async () => {
    const clock = new ManualClock(0); // leases timed by the test
    const leader = redis.store({ instances: 2, leaseTtlMs: 10_000, clock });
    for (let i = 0; i < 40; i++) await leader.consume({ checks: [hot], now: T0 + i });
    const joiner = redis.store({ instances: 2, leaseTtlMs: 10_000, clock });
    await joiner.consume({ checks: [hot], now: T0 + 40 }); // the join: a lease
    expect(joiner.consume({ checks: [hot], now: T0 + 41 })).toMatchObject({ allowed: true });
    expect(joiner.stats()).toMatchObject({ redisCalls: 1, leasesTaken: 1 });
    // Its lease expires with tokens left; its next request asks the fleet again, once, and the
    // tokens left go back with that call (before: a give-back call of their own beside it).
    clock.advance(10_000);
    expect(await joiner.consume({ checks: [hot], now: T0 + 60 })).toMatchObject({ allowed: true });
    expect(joiner.stats()).toMatchObject({ redisCalls: 2, leasesReturned: 1 });
  });

  it('never spends a reservation put back after its lease expired (in a fleet, the key is owed anew)', async () => {
    const clock = new ManualClock(0);
    const leader = redis.store({ instances: 2, leaseTtlMs: 10_000, clock });
    for (let i = 0; i < 40; i++) await leader.consume({ checks: [hot], now: T0 + i });
    const joiner = redis.store({ instances: 2, leaseTtlMs: 10_000, clock });
    await joiner.consume({ checks: [hot], now: T0 + 40 }); // the join: a lease until 10 s
    const cold = check('cold', 1, 1);
    await redis.redisStore().consume({ checks: [cold], now: T0 + 41 }); // empty: Redis will deny it
    // Two tokens of the lease spent ahead of the call that decides `cold`...
    const dear = check('hot', 1_000, 1_000, 2);
    const pending = joiner.consume({ checks: [dear, cold], now: T0 + 42 });
    // ...while the lease expires (the sweep of the next request finds it), and is owed until 20 s.
    clock.advance(10_000);
    await joiner.consume({ checks: [check('elsewhere', 1, 10)], now: T0 + 43 });
    expect((await pending).allowed).toBe(false); // the two tokens come back: owed, not spendable
    clock.advance(9_999);
    const later = joiner.consume({ checks: [dear], now: T0 + 44 });
    expect(later).toHaveProperty('then'); // a Redis call, not a lease granted 19.999 s ago
    await later;
  });

  it('holds a key a paced fleet denied at its first sighting a quarter lease TTL at most: its next call asks its pace', async () => {
    const slow = check('paced', 2, 100);
    const leader = makeStore(2);
    for (let i = 0; i < 200; i++) await leader.consume({ checks: [slow], now: T0 + i });
    // The bucket's own wait counts the leader's pace, charged ahead for as long as it lasts.
    const bucket = await redis.redisStore().peek({ checks: [slow], now: T0 + 200 });
    expect(bucket.decisions[0]!.retryAfterMs).toBeGreaterThan(2_000);
    // A joiner with a lease TTL of 4 s: held a quarter of it, 1 s, then asked again.
    const joiner = redis.store({ instances: 2, leaseTtlMs: 4_000 });
    expect(await joiner.consume({ checks: [slow], now: T0 + 200 })).toMatchObject({
      allowed: false,
    });
    expect(joiner.consume({ checks: [slow], now: T0 + 1_199 })).not.toHaveProperty('then');
    const asked = joiner.consume({ checks: [slow], now: T0 + 1_200 });
    expect(asked).toHaveProperty('then');
    await asked;
    expect(joiner.stats()).toMatchObject({ redisCalls: 2 });
  });

  it('gives a key nobody leases no lease, and writes nothing but its bucket', async () => {
    const store = makeStore(2);
    const user = check('user:1', 1, 10);
    expect(await store.consume({ checks: [user], now: T0 })).toMatchObject({ allowed: true });
    expect(store.stats()).toMatchObject({ redisCalls: 1, leasesTaken: 0, localKeys: 0 });
    expect(await redis.client.exists(`${redisKey(redis.prefix, 'user:1')}:fleet`)).toBe(0);
  });

  it('asks no join with instances 1 (the default): a first sighting is a plain consume', async () => {
    const leader = makeStore(2);
    for (let i = 0; i < 40; i++) await leader.consume({ checks: [hot], now: T0 + i });
    const alone = makeStore(1);
    await alone.consume({ checks: [hot], now: T0 + 40 });
    expect(alone.stats()).toMatchObject({ redisCalls: 1, leasesTaken: 0 });
  });
});
