/**
 * RedisStore on a 3-master Redis Cluster: requests across slots (one script
 * call per slot, give-backs when a later slot denies or fails), and the lease
 * operations TwoTierStore builds on across slots. One cluster for the file,
 * started by the harness; in the `fault` project (jest.config.ts). The
 * standalone parts are unit specs: redis.store.spec.ts and
 * redis.store.lease.spec.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import { rawCommand, uniquePrefix } from '../../test/utils/redis-harness.js';
import { approximately } from '../../test/utils/approximately.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { redisClusterFixture } from '../../test/utils/redis-cluster-fixture.js';
import { keysInDistinctSlots } from '../../test/utils/cluster-keys.js';
import { describeStoreContract, describeWindowStoreContract } from '../../lib/store/index.js';
import { ModelStore } from '../../lib/store/contract/model-store.js';
import { RedisStore, type LeaseCheck, type RedisClient } from './index.js';
import { keySlot, redisKey } from './redis-keys.js';
import { SCRIPTS, type ScriptName } from './scripts/index.js';
import { bucket, check } from '../../test/utils/checks.js';

const lease = (
  key: string,
  rate: number,
  burst: number,
  cost: number,
  maxExtra: number,
): LeaseCheck => ({ ...check(key, rate, burst, cost), maxExtra });

const redis = redisClusterFixture();

describe('RedisStore on a Redis Cluster (3 masters)', () => {
  let prefix: string;

  beforeEach(() => {
    prefix = uniquePrefix('cluster');
  });

  const makeStore = (options: Partial<ConstructorParameters<typeof RedisStore>[0]> = {}) =>
    new RedisStore({ client: redis.client, keyPrefix: prefix, ...ON_TEST_CLOCK, ...options });

  it('computes the same slots as the Cluster, whatever the key contains', async () => {
    for (const raw of ['foo{}{bar}', 'foo{{bar}}zap', 'foo{bar}{zap}', '{}', 'é', 'plain']) {
      expect(await redis.client.cluster('KEYSLOT', raw)).toBe(keySlot(raw));
    }
    const keys = ['ip:10.0.0.1', 'user:{admin}', '{x}', 'é{', '}{', 'x'.repeat(500), '#h'];
    for (const key of keys) {
      const stored = redisKey(prefix, key);
      expect(await redis.client.cluster('KEYSLOT', stored)).toBe(keySlot(stored));
    }
    // An injected tag does not pull two callers' buckets into one slot (or onto the tag's slot).
    const a = redisKey(prefix, 'route:a:{victim}');
    const b = redisKey(prefix, 'route:b:{victim}');
    expect(keySlot(a)).not.toBe(keySlot(b));
    expect(keySlot(a)).not.toBe(keySlot('victim'));
  });

  it('makes one script call per slot involved', async () => {
    const store = makeStore();
    const evalshaCalls = async () => {
      let total = 0;
      for (const node of redis.cluster.nodes) {
        const info = await rawCommand(node.port, ['INFO', 'commandstats']);
        total += Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
      }
      return total;
    };
    // Every node caches the scripts on its own: load them everywhere first, so
    // the count below is not disturbed by NOSCRIPT fallbacks.
    for (const script of Object.values(SCRIPTS)) {
      await Promise.all(
        redis.cluster.nodes.map((node) => rawCommand(node.port, ['SCRIPT', 'LOAD', script.source])),
      );
    }
    await Promise.all(
      redis.cluster.nodes.map((node) => rawCommand(node.port, ['CONFIG', 'RESETSTAT'])),
    );
    const result = await store.consume({ checks: [check('solo', 1, 2)], now: 0 });
    expect(result.decisions[0]).toMatchObject({ allowed: true, remaining: 1 });
    expect(await evalshaCalls()).toBe(1);
    await store.consume({
      checks: keysInDistinctSlots(prefix, 3).map((k) => check(k, 1, 2)),
      now: 0,
    });
    expect(await evalshaCalls()).toBe(4);
  });

  it('settles keys in distinct slots, one script call per slot: a refund in one, debt in another', async () => {
    const store = makeStore();
    const [first, second] = keysInDistinctSlots(prefix, 2) as [string, string];
    const limit = { algorithm: 'token-bucket', rate: 10, burst: 5 } as const; // one token every 100 ms
    await store.consume({ checks: [check(first, 10, 5, 3), check(second, 10, 5, 3)], now: 0 });
    const settled = await store.settle({
      checks: [
        { key: first, limit, delta: -2 },
        { key: second, limit, delta: 4 },
      ],
      now: 0,
    });
    expect(settled.decisions[0]).toMatchObject({ allowed: true, remaining: 4, resetMs: 100 });
    expect(settled.decisions[1]).toMatchObject({ allowed: false, retryAfterMs: 200, resetMs: 700 });
    expect((await store.consume({ checks: [check(second, 10, 5)], now: 299 })).allowed).toBe(false);
    expect((await store.consume({ checks: [check(second, 10, 5)], now: 300 })).allowed).toBe(true);
  });

  it('gives back what earlier slots took when a later slot denies', async () => {
    const store = makeStore();
    const [first, second, third] = keysInDistinctSlots(prefix, 3) as [string, string, string];
    const model = new ModelStore();
    const checks = [check(second, 10, 5), check(third, 1, 1), check(first, 10, 5)];
    const admitted = { checks, now: 0 };
    expect(await store.consume(admitted)).toEqual(approximately(model.consume(admitted)));
    const values = await Promise.all(
      [first, second, third].map((k) => redis.client.get(redisKey(prefix, k))),
    );

    const denied = { checks, now: 10 };
    const result = await store.consume(denied);
    expect(result.allowed).toBe(false);
    expect(result).toEqual(approximately(model.consume(denied)));
    // The slots before the denying one were charged, then put back exactly.
    expect(
      await Promise.all([first, second, third].map((k) => redis.client.get(redisKey(prefix, k)))),
    ).toEqual(values);
  });

  it('windows across slots: a later slot that denies gets the earlier window counts put back exactly', async () => {
    const store = makeStore();
    const [first, second, third] = keysInDistinctSlots(prefix, 3) as [string, string, string];
    const model = new ModelStore();
    const T = 1_700_000_040_000;
    const checks = [
      {
        key: second,
        limit: { algorithm: 'fixed-window', quota: 3, windowMs: 60_000 } as const,
        cost: 1,
      },
      {
        key: third,
        limit: { algorithm: 'sliding-window', quota: 1, windowMs: 60_000 } as const,
        cost: 1,
      },
      {
        key: first,
        limit: { algorithm: 'sliding-window', quota: 5, windowMs: 60_000 } as const,
        cost: 2,
      },
    ];
    const admitted = { checks, now: T };
    expect(await store.consume(admitted)).toEqual(approximately(model.consume(admitted)));
    const values = await Promise.all(
      [first, second, third].map((k) => redis.client.get(redisKey(prefix, k))),
    );
    const denied = { checks, now: T + 10 };
    const result = await store.consume(denied);
    expect(result.allowed).toBe(false);
    expect(result).toEqual(approximately(model.consume(denied)));
    expect(
      await Promise.all([first, second, third].map((k) => redis.client.get(redisKey(prefix, k)))),
    ).toEqual(values);
  });

  it('evaluates, without charging, the slots after the denying one', async () => {
    const store = makeStore();
    const [first, second] = keysInDistinctSlots(prefix, 2) as [string, string];
    await store.consume({ checks: [check(first, 1, 1)], now: 0 });
    const model = new ModelStore();
    model.consume({ checks: [check(first, 1, 1)], now: 0 });
    const request = { checks: [check(second, 10, 5, 2), check(first, 1, 1)], now: 0 };
    expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
    expect(await redis.client.exists(redisKey(prefix, second))).toBe(0);
  });

  /** The script sent (by SHA or by source), by name. */
  const scriptName = (shaOrSource: string): ScriptName =>
    Object.values(SCRIPTS).find(
      (script) => script.sha === shaOrSource || script.source === shaOrSource,
    )!.name;

  /** The real Cluster client, with calls for one key or one script made to fail (`argv`: the script's ARGV). */
  const failing = (
    fails: (keys: string[], script: ScriptName, argv: string[]) => boolean,
  ): RedisClient => {
    const fail = (script: string, numkeys: number, args: string[]) =>
      fails(args.slice(0, numkeys), scriptName(script), args.slice(numkeys));
    return {
      isCluster: true,
      get status() {
        return redis.client.status;
      },
      evalsha: (sha, numkeys, ...args) =>
        fail(sha, numkeys, args)
          ? Promise.reject(new Error('injected failure'))
          : redis.client.evalsha(sha, numkeys, ...args),
      eval: (script, numkeys, ...args) =>
        fail(script, numkeys, args)
          ? Promise.reject(new Error('injected failure'))
          : redis.client.eval(script, numkeys, ...args),
      del: (...keys) => redis.client.del(...keys),
    };
  };

  it('answers the denial even when the refund fails, reporting the bucket as charged', async () => {
    const store = new RedisStore({
      client: failing((_keys, script) => script === 'refund'),
      keyPrefix: prefix,
      ...ON_TEST_CLOCK,
    });
    const [first, second] = keysInDistinctSlots(prefix, 2) as [string, string];
    await store.consume({ checks: [check(second, 1, 1)], now: 0 });
    const result = await store.consume({
      checks: [check(first, 10, 5), check(second, 1, 1)],
      now: 0,
    });
    expect(result.allowed).toBe(false);
    // The refund never happened: the first bucket is charged, and says so.
    expect(result.decisions[0]).toEqual({
      allowed: true,
      remaining: 4,
      retryAfterMs: 0,
      resetMs: 100,
    });
    expect(await redis.client.get(redisKey(prefix, first))).toBe('0:100');
    expect(store.refundFailures).toBe(1);
  });

  it('rejects when a later slot fails, and still gives back what earlier slots took', async () => {
    const [first, second] = keysInDistinctSlots(prefix, 2) as [string, string];
    const secondKey = redisKey(prefix, second);
    const store = new RedisStore({
      // Slot by slot, consumes ask for their refund receipts (ARGV[3] = '1').
      client: failing(
        (keys, script, argv) => script === 'consume' && argv[2] === '1' && keys.includes(secondKey),
      ),
      keyPrefix: prefix,
      // Unpadded, the first key (TAT 100 ms) would be gone by itself, given back or not.
      ...ON_TEST_CLOCK,
    });
    await expect(
      store.consume({ checks: [check(first, 10, 5), check(second, 1, 1)], now: 0 }),
    ).rejects.toThrow(RateLimitStoreError);
    const firstKey = redisKey(prefix, first);
    const deadline = Date.now() + 5_000;
    while ((await redis.client.exists(firstKey)) === 1 && Date.now() < deadline) await sleep(10);
    expect(await redis.client.exists(firstKey)).toBe(0);
  });

  it('peeks and resets across slots', async () => {
    const store = makeStore();
    const keys = keysInDistinctSlots(prefix, 3);
    await store.consume({ checks: keys.map((k) => check(k, 1, 3)), now: 0 });
    const buckets = keys.map((k) => bucket(k, 1, 3));
    expect(
      (await store.peek({ checks: buckets, now: 0 })).decisions.map((d) => d.remaining),
    ).toEqual([2, 2, 2]);
    await store.reset({ checks: buckets, now: 0 });
    expect(
      (await store.peek({ checks: buckets, now: 0 })).decisions.map((d) => d.remaining),
    ).toEqual([3, 3, 3]);
  });

  it('uses Redis time across slots too', async () => {
    const store = makeStore({ time: 'server' });
    const keys = keysInDistinctSlots(prefix, 2);
    const checks = keys.map((k) => check(k, 0.1, 1));
    expect((await store.consume({ checks, now: 0 })).allowed).toBe(true);
    const denied = await store.consume({ checks, now: 0 });
    expect(denied.allowed).toBe(false);
    expect(denied.decisions[0]!.retryAfterMs).toBeGreaterThan(5_000);
    expect(denied.decisions[0]!.retryAfterMs).toBeLessThanOrEqual(10_000);
  });

  // The window contract too (anchored windows and their blocks included): keys of a request in several slots.
  describeWindowStoreContract(
    'RedisStore on a Redis Cluster (client time)',
    () =>
      new RedisStore({
        client: redis.client,
        keyPrefix: uniquePrefix('cluster-window-contract'),
        ...ON_TEST_CLOCK,
      }),
  );
  describeStoreContract(
    'RedisStore on a Redis Cluster (client time)',
    () =>
      new RedisStore({
        client: redis.client,
        keyPrefix: uniquePrefix('cluster-contract'),
        ...ON_TEST_CLOCK,
      }),
  );
});

describe('RedisStore leases on a Redis Cluster', () => {
  let prefix: string;

  beforeEach(() => {
    prefix = uniquePrefix('lease-cluster');
  });

  it('leases slot by slot, and a later slot that denies gives back cost and extras of the earlier ones', async () => {
    const store = new RedisStore({ client: redis.client, keyPrefix: prefix, ...ON_TEST_CLOCK });
    const [first, second] = keysInDistinctSlots(prefix, 2) as [string, string];
    const admitted = await store.lease({
      checks: [lease(first, 10, 10, 1, 3), lease(second, 10, 10, 1, 2)],
      now: 0,
    });
    expect(admitted.allowed).toBe(true);
    expect(admitted.extras).toEqual([3, 2]);
    await store.refund({ checks: [check(first, 10, 10, 3), check(second, 10, 10, 2)], now: 0 });

    await store.consume({ checks: [check(second, 10, 10, 9)], now: 0 }); // second: 1 + 9 = 10 taken
    const before = await redis.client.get(redisKey(prefix, first));
    const denied = await store.lease({
      checks: [lease(first, 10, 10, 1, 5), lease(second, 10, 10, 1, 5)],
      now: 0,
    });
    expect(denied.allowed).toBe(false);
    expect(denied.extras).toEqual([0, 0]);
    // The first slot was charged 1 + 5, then put back exactly.
    expect(await redis.client.get(redisKey(prefix, first))).toBe(before);
    await store.close();
  });

  it('gives back across slots', async () => {
    const store = new RedisStore({
      client: redis.client as RedisClient,
      keyPrefix: prefix,
      ...ON_TEST_CLOCK,
    });
    const keys = keysInDistinctSlots(prefix, 3);
    await store.lease({ checks: keys.map((k) => lease(k, 10, 10, 1, 4)), now: 0 });
    const back = await store.refund({ checks: keys.map((k) => check(k, 10, 10, 4)), now: 0 });
    expect(back.decisions.map((d) => d.remaining)).toEqual([9, 9, 9]);
    await store.close();
  });
});
