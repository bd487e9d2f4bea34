/**
 * The lease operations TwoTierStore builds on: `RedisStore.lease` (a consume
 * that takes extra whole tokens along, atomically) and `RedisStore.refund`
 * (the unspent ones back), on a standalone Redis. Across Cluster slots:
 * redis.store.cluster.spec.ts (`fault` project).
 */
import type { Redis } from 'ioredis';
import { approximately } from '../../test/utils/approximately.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { ModelStore } from '../../lib/store/contract/model-store.js';
import { RedisStore, type LeaseCheck } from './index.js';
import { redisKey } from './redis-keys.js';
import { bucket, check } from '../../test/utils/checks.js';

const lease = (
  key: string,
  rate: number,
  burst: number,
  cost: number,
  maxExtra: number,
): LeaseCheck => ({ ...check(key, rate, burst, cost), maxExtra });

describe('RedisStore leases (standalone)', () => {
  let client: Redis;
  let prefix: string;
  let store: RedisStore;

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(async () => {
    await client.quit();
  });
  beforeEach(() => {
    prefix = uniquePrefix('lease');
    store = new RedisStore({ client, keyPrefix: prefix, ...ON_TEST_CLOCK });
  });
  afterEach(() => store.close());

  it('answers like consume, and takes up to maxExtra more whole tokens in the same call', async () => {
    const model = new ModelStore();
    const request = { checks: [lease('k', 10, 10, 2, 5)], now: 0 };
    const result = await store.lease(request);
    // The decision is consume's: the bucket after the cost, before the extras.
    expect({ allowed: result.allowed, decisions: result.decisions }).toEqual(
      approximately(model.consume(request)),
    );
    expect(result.extras).toEqual([5]);
    // Redis holds cost + extras: 7 of 10 taken.
    expect(
      (await store.peek({ checks: [bucket('k', 10, 10)], now: 0 })).decisions[0],
    ).toMatchObject({ remaining: 3, resetMs: 700 });
  });

  it('grants only what the bucket holds after the cost, and nothing when it denies', async () => {
    const first = await store.lease({ checks: [lease('k', 10, 5, 1, 100)], now: 0 });
    expect(first.extras).toEqual([4]);
    expect(first.decisions[0]).toMatchObject({ allowed: true, remaining: 4 });
    const denied = await store.lease({ checks: [lease('k', 10, 5, 1, 100)], now: 50 });
    expect(denied).toEqual({
      allowed: false,
      decisions: [
        { allowed: false, remaining: 0, retryAfterMs: 50, resetMs: 450, reason: 'limit' },
      ],
      extras: [0],
    });
    // 250 ms later: 2.5 tokens back; 1 for the cost, 1 whole extra (the half stays).
    const partial = await store.lease({ checks: [lease('k', 10, 5, 1, 100)], now: 250 });
    expect(partial.extras).toEqual([1]);
  });

  it('is all or nothing across checks, extras included', async () => {
    await store.consume({ checks: [check('narrow', 1, 1)], now: 0 });
    const result = await store.lease({
      checks: [lease('wide', 10, 10, 1, 5), lease('narrow', 1, 1, 1, 0)],
      now: 0,
    });
    expect(result.allowed).toBe(false);
    expect(result.extras).toEqual([0, 0]);
    expect(await client.exists(redisKey(prefix, 'wide'))).toBe(0);
  });

  it('with maxExtra 0 is exactly consume, and rejects a negative maxExtra', async () => {
    const model = new ModelStore();
    for (let i = 0; i < 4; i++) {
      const request = { checks: [lease('k', 3, 3, 1, 0)], now: i * 10 };
      const { extras, ...result } = await store.lease(request);
      expect(result).toEqual(approximately(model.consume(request)));
      expect(extras).toEqual([0]);
    }
    await expect(store.lease({ checks: [lease('k', 3, 3, 1, -1)], now: 0 })).rejects.toThrow(
      /maxExtra/,
    );
  });

  it('gives tokens back (TAT -= tokens x interval), never past a full bucket', async () => {
    await store.lease({ checks: [lease('k', 10, 10, 1, 5)], now: 0 }); // 6 taken: tat 600
    const back = await store.refund({ checks: [check('k', 10, 10, 2.5)], now: 100 });
    expect(back.decisions[0]).toMatchObject({ allowed: true, remaining: 7, resetMs: 250 }); // tat 600 - 250, at 100
    await store.refund({ checks: [check('k', 10, 10, 10)], now: 100 });
    expect(await client.exists(redisKey(prefix, 'k'))).toBe(0); // full: key gone
    // A bucket already full (or never seen) stays so.
    expect(
      (await store.refund({ checks: [check('never', 10, 10, 3)], now: 0 })).decisions[0],
    ).toMatchObject({ remaining: 10 });
    expect(await client.exists(redisKey(prefix, 'never'))).toBe(0);
  });

  it('takes extras as whole tokens at fractional rates, never beyond the burst', async () => {
    const result = await store.lease({ checks: [lease('k', 3, 7, 0.5, 100)], now: 0 });
    expect(result.extras).toEqual([6]); // 6.5 left after the cost: 6 whole
    const denied = await store.lease({ checks: [lease('k', 3, 7, 1, 100)], now: 0 });
    expect(denied.allowed).toBe(false);
    expect((await store.peek({ checks: [bucket('k', 3, 7)], now: 0 })).decisions[0]).toMatchObject({
      remaining: 0,
    });
  });

  describe('fleet count (issue 29: the instances leasing a bucket, in the same call)', () => {
    const fleet = (id: string, windowMs = 1_000) => ({ id, windowMs });

    it('counts each instance once within the window, drops those silent longer, and answers the count', async () => {
      // A 10 s window: the set also expires a window after its last write in Redis' real time, and
      // a loaded machine can stall for a second or two between two calls.
      const ask = (id: string, now: number) =>
        store.lease({
          checks: [lease('hot', 1_000, 1_000, 1, 5)],
          now,
          fleet: fleet(id, 10_000),
        });
      expect((await ask('a', 0)).instances).toEqual([1]);
      expect((await ask('b', 1_000)).instances).toEqual([2]);
      expect((await ask('a', 2_000)).instances).toEqual([2]); // the same instance again
      // At 11,500, b (last seen at 1,000) is older than the window; a (2,000) is not.
      expect((await ask('c', 11_500)).instances).toEqual([2]);
      const fleetKey = `${redisKey(prefix, 'hot')}:fleet`;
      // And the epoch, created with the set at 0 (scored +inf: never trimmed).
      expect(await client.zrange(fleetKey, '0', '-1')).toEqual(['a', 'c', '~0']);
      // The set lives at most a window after its last write (nothing left behind by a fleet gone).
      const ttl = await client.pttl(fleetKey);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(10_000);
    });

    it('counts a denied instance too (it takes part), and only checks that ask a lease', async () => {
      await store.consume({ checks: [check('dry', 1, 1)], now: 0 });
      const result = await store.lease({
        checks: [lease('dry', 1, 1, 1, 3), lease('cold', 10, 10, 1, 0)],
        now: 0,
        fleet: fleet('a'),
      });
      expect(result.allowed).toBe(false);
      expect(result.instances).toEqual([1, 0]);
      expect(await client.exists(`${redisKey(prefix, 'cold')}:fleet`)).toBe(0);
    });

    it('decides exactly as without the count', async () => {
      const plain = await store.lease({ checks: [lease('x', 10, 10, 2, 5)], now: 0 });
      const counted = await store.lease({
        checks: [lease('y', 10, 10, 2, 5)],
        now: 0,
        fleet: fleet('a'),
      });
      const fleetParts = {
        instances: undefined,
        epochs: undefined,
        loads: undefined,
        paces: undefined,
        paceMs: undefined,
        paceLumps: undefined,
        paceSavings: undefined,
      };
      expect({ ...counted, ...fleetParts }).toEqual({ ...plain, ...fleetParts });
      expect(counted).toMatchObject({ paces: [0], paceMs: [0], paceLumps: [0] });
      expect(plain.instances).toBeUndefined();
    });

    it('joins a bucket other instances lease or asked to join with joinExtra, and nothing else', async () => {
      const join = (key: string, id: string, now: number, joinCounts?: boolean) =>
        store.lease({
          checks: [{ ...lease(key, 1_000, 100, 1, 0), joinExtra: 4, joinCounts }],
          now,
          // A minute: the fleet set expires a window after its last write in real time (padding
          // does not reach it), and a stall between two asks must not drop a's count.
          fleet: fleet(id, 60_000),
        });
      const fleetKey = `${redisKey(prefix, 'hot')}:fleet`;
      // A first sighting (not counted) of a key nobody leases: a plain consume, nothing written
      // but the bucket (a cold or per-user key).
      const cold = await join('hot', 'b', 0, false);
      expect(cold.extras).toEqual([0]);
      expect(cold.instances).toEqual([0]);
      expect(cold.epochs).toEqual(['']);
      expect(await client.exists(fleetKey)).toBe(0);
      // The same key asked again by a (counted): no lease yet (nobody else), but a counts.
      const asked = await join('hot', 'a', 1);
      expect(asked.extras).toEqual([0]);
      expect(asked.instances).toEqual([1]);
      expect(asked.epochs).toEqual(['~1']);
      // b's first sighting now takes the join, and counts.
      const joined = await join('hot', 'b', 2, false);
      expect(joined.extras).toEqual([4]);
      expect(joined.instances).toEqual([2]);
      expect(joined.epochs).toEqual(['~1']);
      // And a's next ask joins b.
      expect((await join('hot', 'a', 3)).extras).toEqual([4]);
    });

    it('takes a bucket whose fleet set vanished under a caller that saw its epoch as empty, once', async () => {
      const ask = (id: string, now: number, epoch?: string) =>
        store.lease({
          checks: [{ ...lease('hot', 100, 100, 1, 10), ...(epoch === undefined ? {} : { epoch }) }],
          now,
          fleet: fleet(id, 10_000),
        });
      const first = await ask('a', 0);
      expect(first.epochs).toEqual(['~0']);
      // State lost (a restart or failover): the bucket and its set are gone.
      await client.del(redisKey(prefix, 'hot'), `${redisKey(prefix, 'hot')}:fleet`);
      const lost = await ask('a', 100, '~0');
      expect(lost.allowed).toBe(false);
      expect(lost.epochs).toEqual(['~100']);
      expect(
        (await store.peek({ checks: [bucket('hot', 100, 100)], now: 100 })).decisions[0],
      ).toMatchObject({ remaining: 0 });
      // Another instance telling the old epoch finds the new one: no second reset (5 tokens refilled by 150).
      const other = await ask('b', 150, '~0');
      expect(other.allowed).toBe(true);
      expect(other.epochs).toEqual(['~100']);
      // A caller that saw no epoch finds a missing bucket full, as always.
      const fresh = await store.lease({
        checks: [lease('new', 100, 100, 1, 10)],
        now: 0,
        fleet: fleet('a', 10_000),
      });
      expect(fresh.extras).toEqual([10]);
    });
  });
});
