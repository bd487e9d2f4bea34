import { bucketCheck, splitBucketKey } from '../../lib/store/bucket-key.js';
import type { ConsumeRequest } from '../../lib/store/rate-limit-store.interface.js';
import { check, tokenBucket } from '../../test/utils/checks.js';
import { MemoryStore } from './memory.store.js';

/** The store's tables by namespace (internal: read to check that emptied ones go). */
const tablesOf = (store: MemoryStore) =>
  (store as unknown as { tables: Map<string, unknown> }).tables;
/** A request no bucket can admit and that is never written: it only drives the sweep. */
const sweepOnly = (now: number): ConsumeRequest => ({ now, checks: [check('probe', 1, 1, 2)] });

describe('MemoryStore: buckets by namespace and identity', () => {
  const limit = tokenBucket(1, 3);

  it('splits a whole key the way the module builds it', () => {
    expect(splitBucketKey('tb|search|Orders.search:orders|203.0.113.7')).toEqual({
      namespace: 'tb|search|Orders.search:orders|',
      identity: '203.0.113.7',
    });
    expect(splitBucketKey('tb|login|*|h=a|b|c')).toEqual({
      namespace: 'tb|login|*|',
      identity: 'h=a|b|c',
    });
    expect(splitBucketKey('user:42')).toEqual({ namespace: '', identity: 'user:42' });
    expect(splitBucketKey('a|b')).toEqual({ namespace: '', identity: 'a|b' });
  });

  it('decides the same bucket whether a check carries the parts or only the whole key', () => {
    const store = new MemoryStore();
    const parts = bucketCheck('tb|default|*|', '203.0.113.7', limit, 1);
    const whole = { key: parts.key, limit, cost: 1 };
    expect(store.consume({ now: 0, checks: [parts] }).decisions[0]!.remaining).toBe(2);
    expect(store.consume({ now: 0, checks: [whole] }).decisions[0]!.remaining).toBe(1);
    expect(
      store.peek({ now: 0, checks: [{ key: parts.key, limit }] }).decisions[0]!.remaining,
    ).toBe(1);
    // All or nothing (two checks) reads and writes the same buckets too.
    expect(
      store.consume({ now: 0, checks: [whole, bucketCheck('tb|other|*|', 'x', limit, 1)] })
        .decisions[0]!.remaining,
    ).toBe(0);
    expect(store.consume({ now: 0, checks: [parts] }).allowed).toBe(false);
    store.reset({ now: 0, checks: [whole] });
    expect(store.size).toBe(1);
    expect(store.consume({ now: 0, checks: [parts] }).decisions[0]!.remaining).toBe(2);
  });

  it('keeps the same identity apart in two namespaces', () => {
    const store = new MemoryStore();
    const a = bucketCheck('tb|a|*|', '203.0.113.7', limit, 3);
    const b = bucketCheck('tb|b|*|', '203.0.113.7', limit, 1);
    expect(store.consume({ now: 0, checks: [a] }).allowed).toBe(true);
    expect(store.consume({ now: 0, checks: [a] }).allowed).toBe(false);
    expect(store.consume({ now: 0, checks: [b] }).decisions[0]!.remaining).toBe(2);
    expect(store.size).toBe(2);
  });

  it('drops a namespace table once the sweep finds it empty, so namespaces that come and go are not kept', () => {
    const store = new MemoryStore();
    for (let i = 0; i < 1000; i++)
      store.consume({ now: 0, checks: [bucketCheck(`tb|n${i}|*|`, 'caller', limit, 1)] });
    expect(tablesOf(store).size).toBe(1000);
    // A second later every bucket is full again: the sweep drops them, then their tables.
    for (let now = 1000; now < 1000 + 20_000 && tablesOf(store).size > 1; now++)
      store.consume(sweepOnly(now));
    expect(store.size).toBe(0);
    expect(tablesOf(store).size).toBeLessThanOrEqual(1); // the probe's own
    // A namespace dropped and used again works as new.
    expect(
      store.consume({ now: 30_000, checks: [bucketCheck('tb|n1|*|', 'caller', limit, 3)] }).allowed,
    ).toBe(true);
    expect(
      store.consume({ now: 30_000, checks: [bucketCheck('tb|n1|*|', 'caller', limit, 1)] }).allowed,
    ).toBe(false);
  });

  it('holds maxKeys across namespaces, evicting from every namespace in turn, never the bucket just added', () => {
    const store = new MemoryStore({ maxKeys: 10 });
    const a = (i: number) => bucketCheck('tb|a|*|', `c${i}`, limit, 1);
    const b = (i: number) => bucketCheck('tb|b|*|', `c${i}`, limit, 1);
    const held = (c: ReturnType<typeof a>) =>
      store.peek({ now: 0, checks: [c] }).decisions[0]!.remaining < 3;
    for (let i = 0; i < 10; i++) store.consume({ now: 0, checks: [a(i)] });
    for (let i = 0; i < 6; i++) {
      store.consume({ now: 0, checks: [b(i)] });
      expect(held(b(i))).toBe(true);
      expect(store.size).toBe(10);
    }
    expect(store.evictions).toBe(6);
    const heldA = Array.from({ length: 10 }, (_, i) => held(a(i))).filter(Boolean).length;
    const heldB = Array.from({ length: 6 }, (_, i) => held(b(i))).filter(Boolean).length;
    expect(heldA + heldB).toBe(10);
    // Both namespaces gave buckets up: a newcomer does not only churn its own.
    expect(heldA).toBeLessThan(10);
    expect(heldB).toBeGreaterThan(1);
  });

  it('splits a table into shards only as it grows: a namespace of a few hundred callers is one map', () => {
    const store = new MemoryStore(); // maxKeys 1M: up to 128 shards of ~4k
    const table = (namespace: string) =>
      tablesOf(store).get(namespace) as unknown as { shardCount: number; size: number };
    for (let i = 0; i < 500; i++)
      store.consume({
        now: 0,
        checks: [bucketCheck('tb|small|*|', `10.0.${i >> 8}.${i & 255}`, limit, 1)],
      });
    expect(table('tb|small|*|').shardCount).toBe(1);
    for (let i = 0; i < 40_000; i++)
      store.consume({
        now: 0,
        checks: [bucketCheck('tb|big|*|', `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, limit, 1)],
      });
    const big = table('tb|big|*|');
    expect(big.size).toBe(40_000);
    // Split on demand: about 40k / 4k shards or a little more (hash luck), never the full 128.
    expect(big.shardCount).toBeGreaterThanOrEqual(10);
    expect(big.shardCount).toBeLessThanOrEqual(32);
    // Every bucket still decides as before the splits.
    for (let i = 0; i < 40_000; i += 997) {
      expect(
        store.peek({
          now: 0,
          checks: [
            bucketCheck('tb|big|*|', `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, limit, 1),
          ],
        }).decisions[0]!.remaining,
      ).toBe(2);
    }
  });

  it('reuses the slot of a dropped bucket, window state or time alike', () => {
    const store = new MemoryStore();
    const window = { algorithm: 'fixed-window', quota: 2, windowMs: 1000 } as const;
    const win = (identity: string) => bucketCheck('fw|w|*|', identity, window, 1);
    const tb = (identity: string) => bucketCheck('fw|w|*|', identity, limit, 1);
    expect(store.consume({ now: 0, checks: [win('x')] }).decisions[0]!.remaining).toBe(1);
    store.reset({ now: 0, checks: [win('x')] });
    // The slot freed by a window state now holds a time, and the other way round.
    expect(store.consume({ now: 0, checks: [tb('y')] }).decisions[0]!.remaining).toBe(2);
    expect(store.consume({ now: 0, checks: [tb('y')] }).decisions[0]!.remaining).toBe(1);
    store.reset({ now: 0, checks: [tb('y')] });
    expect(store.consume({ now: 0, checks: [win('z')] }).decisions[0]!.remaining).toBe(1);
    expect(store.consume({ now: 0, checks: [win('z')] }).decisions[0]!.remaining).toBe(0);
    expect(store.consume({ now: 0, checks: [win('z')] }).allowed).toBe(false);
  });
});
