/**
 * TwoTierStore fleets on a Redis Cluster (3 masters): a request whose keys
 * span slots goes slot by slot (`RedisStore`'s cross-slot path), which sends
 * no fleet and no pace. What a key owes its bucket must still get back there.
 */
import { ManualClock } from '../../lib/clock.js';
import { bucket, check } from '../../test/utils/checks.js';
import { keysInDistinctSlots } from '../../test/utils/cluster-keys.js';
import { redisClusterFixture } from '../../test/utils/redis-cluster-fixture.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { RedisStore } from '../redis/index.js';
import { TwoTierStore } from './index.js';

const T0 = 1_700_000_000_000;

const redis = redisClusterFixture();

it("gives an expired lease's owed tokens back before a request across slots (its pace, which would carry them, is not sent)", async () => {
  const prefix = uniquePrefix('two-tier-cluster-owed');
  const [hotKey, otherKey] = keysInDistinctSlots(prefix, 2) as [string, string];
  const hot = check(hotKey, 1, 1_000); // 1/s: the bucket refills nothing worth counting here
  const other = check(otherKey, 1, 1);
  const { client } = redis;
  const plain = new RedisStore({ client, keyPrefix: prefix, ...ON_TEST_CLOCK });
  const remaining = async () =>
    (await plain.peek({ checks: [bucket(hotKey, 1, 1_000)], now: T0 + 50 })).decisions[0]!
      .remaining;
  const clock = new ManualClock(0); // leases timed by the test
  const options = { client, keyPrefix: prefix, ...ON_TEST_CLOCK, instances: 2, clock };
  const leader = new TwoTierStore({ ...options, leaseTtlMs: 10_000 });
  for (let i = 0; i < 40; i++) await leader.consume({ checks: [hot], now: T0 + i });
  const joiner = new TwoTierStore({ ...options, leaseTtlMs: 10_000 });
  await joiner.consume({ checks: [hot], now: T0 + 40 }); // the join: a lease of `joined` tokens
  const joined = joiner.stats().leasedTokens;
  expect(joined).toBeGreaterThan(1);
  expect(joiner.consume({ checks: [hot], now: T0 + 41 })).toMatchObject({ allowed: true });
  await leader.close(); // its lease back: the bucket now lacks only the joiner's
  await plain.consume({ checks: [other], now: T0 + 42 }); // `other` empty: its slot denies
  const before = await remaining();
  // The joiner's lease expires with `joined - 1` left, owed; its next request spans both slots
  // and is denied by `other`, so it charges `hot` nothing: the bucket gets exactly the owed back.
  clock.advance(10_000);
  const answer = await joiner.consume({ checks: [hot, other], now: T0 + 50 });
  expect(answer.allowed).toBe(false);
  expect(await remaining()).toBeCloseTo(before + joined - 1, 6);
  await joiner.close();
}, 60_000);
