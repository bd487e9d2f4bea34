import { gcraConsume, gcraPeek, type RateLimitDecision } from '../../lib/algorithms/gcra.js';
import type {
  ConsumeRequest,
  ConsumeResult,
  RateLimitCheck,
  TokenBucketRequest,
} from '../../lib/store/rate-limit-store.interface.js';
import { MemoryStore } from './memory.store.js';
import { BucketShard } from './bucket-shard.js';
import { seededRandom } from '../../lib/adaptive/seeded-random.js';
import { check, tokenBucket } from '../../test/utils/checks.js';

// The 1,000,000-key load and heap-growth suites: memory.store.scale.spec.ts (`fault` project).

/** A request no bucket can admit and that is never written: it only drives the sweep. */
const sweepOnly = (now: number): ConsumeRequest => ({ now, checks: [check('probe', 1, 1, 2)] });

function remainingOf(store: MemoryStore, c: RateLimitCheck, now: number): number {
  return store.peek({ now, checks: [c] }).decisions[0]!.remaining;
}

describe('MemoryStore', () => {
  it('answers synchronously (no promise on the hot path)', () => {
    const store = new MemoryStore();
    const result = store.consume({ now: 0, checks: [check('a', 1, 1)] });
    expect(result).not.toBeInstanceOf(Promise);
    expect(result).toEqual({
      allowed: true,
      decisions: [{ allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1000 }],
    });
    expect(store.peek({ now: 0, checks: [check('a', 1, 1)] })).not.toBeInstanceOf(Promise);
  });

  it('charges a single check exactly like the algorithm', () => {
    const store = new MemoryStore();
    const c = check('a', 2, 3); // I = 500, C = 1500
    expect(store.consume({ now: 0, checks: [c] }).decisions[0]).toEqual({
      allowed: true,
      remaining: 2,
      retryAfterMs: 0,
      resetMs: 500,
    });
    expect(store.consume({ now: 0, checks: [{ ...c, cost: 2 }] }).decisions[0]).toEqual({
      allowed: true,
      remaining: 0,
      retryAfterMs: 0,
      resetMs: 1500,
    });
    expect(store.consume({ now: 100, checks: [c] })).toEqual({
      allowed: false,
      decisions: [
        { allowed: false, remaining: 0, retryAfterMs: 400, resetMs: 1400, reason: 'limit' },
      ],
    });
    expect(store.consume({ now: 500, checks: [c] }).allowed).toBe(true);
  });

  describe('all-or-nothing', () => {
    const wide = check('wide', 1, 5); // I = 1000, C = 5000
    const narrow = check('narrow', 1, 1); // I = C = 1000

    it('a request denied by its second check charges neither; the admitting check reports its uncharged bucket', () => {
      const store = new MemoryStore();
      store.consume({ now: 0, checks: [narrow] }); // narrow is now empty until 1000
      store.consume({ now: 0, checks: [wide] }); // wide: 4 left, full at 1000
      expect(store.size).toBe(2);

      const result = store.consume({ now: 0, checks: [{ ...wide, cost: 2 }, narrow] });
      expect(result.allowed).toBe(false);
      // wide would have admitted cost 2 (4 -> 2 left) but was not charged: it reports 4, reset 1000.
      expect(result.decisions[0]).toEqual({
        allowed: true,
        remaining: 4,
        retryAfterMs: 0,
        resetMs: 1000,
      });
      expect(result.decisions[1]).toEqual({
        allowed: false,
        remaining: 0,
        retryAfterMs: 1000,
        resetMs: 1000,
        reason: 'limit',
      });

      // Not charged: wide still holds 4 and gives exactly 4 more at t = 0.
      expect(remainingOf(store, wide, 0)).toBe(4);
      expect(store.consume({ now: 0, checks: [{ ...wide, cost: 4 }] }).decisions[0]).toMatchObject({
        allowed: true,
        remaining: 0,
      });
      expect(store.consume({ now: 0, checks: [wide] }).allowed).toBe(false);
    });

    it('works the same whichever check denies (denier first) and adds no bucket for an uncharged key', () => {
      const store = new MemoryStore();
      store.consume({ now: 0, checks: [narrow] });
      const result = store.consume({ now: 0, checks: [narrow, { ...wide, cost: 3 }] });
      expect(result.allowed).toBe(false);
      expect(result.decisions[0]).toMatchObject({ allowed: false, reason: 'limit' });
      // wide was never charged: a full bucket, and not stored.
      expect(result.decisions[1]).toEqual({
        allowed: true,
        remaining: 5,
        retryAfterMs: 0,
        resetMs: 0,
      });
      expect(store.size).toBe(1);
      expect(remainingOf(store, wide, 0)).toBe(5);
    });

    it('a check whose cost exceeds its burst denies the whole request', () => {
      const store = new MemoryStore();
      const result = store.consume({ now: 0, checks: [wide, { ...narrow, cost: 2 }] });
      expect(result.allowed).toBe(false);
      expect(result.decisions[0]).toEqual({
        allowed: true,
        remaining: 5,
        retryAfterMs: 0,
        resetMs: 0,
      });
      expect(result.decisions[1]).toMatchObject({
        allowed: false,
        reason: 'cost-exceeds-burst',
        retryAfterMs: Infinity,
      });
      expect(store.size).toBe(0);
    });

    it('charges every check when all admit', () => {
      const store = new MemoryStore();
      const result = store.consume({ now: 0, checks: [{ ...wide, cost: 2 }, narrow] });
      expect(result).toEqual({
        allowed: true,
        decisions: [
          { allowed: true, remaining: 3, retryAfterMs: 0, resetMs: 2000 },
          { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1000 },
        ],
      });
      expect(remainingOf(store, wide, 0)).toBe(3);
      expect(remainingOf(store, narrow, 0)).toBe(0);
    });
  });

  it('peek does not charge, and does not create a bucket', () => {
    const store = new MemoryStore();
    const c = check('a', 1, 3);
    store.consume({ now: 0, checks: [c] });
    for (let i = 0; i < 5; i++) {
      expect(store.peek({ now: 0, checks: [c] })).toEqual({
        allowed: true,
        decisions: [{ allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1000 }],
      });
    }
    expect(store.consume({ now: 0, checks: [c] }).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 1,
    });
    expect(
      store.peek({ now: 0, checks: [check('never-charged', 1, 3)] }).decisions[0],
    ).toMatchObject({ remaining: 3, resetMs: 0 });
    expect(store.size).toBe(1);
  });

  it('reset makes the bucket full again (and forgets it)', () => {
    const store = new MemoryStore();
    const a = check('a', 1, 3);
    const b = check('b', 1, 3);
    store.consume({ now: 0, checks: [{ ...a, cost: 3 }] });
    store.consume({ now: 0, checks: [b] });
    expect(store.consume({ now: 0, checks: [a] }).allowed).toBe(false);

    store.reset({ now: 0, checks: [a, check('unknown', 1, 1)] });
    expect(store.size).toBe(1);
    expect(store.peek({ now: 0, checks: [a] }).decisions[0]).toEqual({
      allowed: true,
      remaining: 3,
      retryAfterMs: 0,
      resetMs: 0,
    });
    expect(store.consume({ now: 0, checks: [{ ...a, cost: 3 }] }).allowed).toBe(true);
    // The other bucket is untouched.
    expect(remainingOf(store, b, 0)).toBe(2);
  });

  it('close forgets every bucket and can be called twice', () => {
    const store = new MemoryStore();
    store.consume({ now: 0, checks: [check('a', 1, 1)] });
    store.close();
    store.close();
    expect(store.size).toBe(0);
    expect(store.consume({ now: 0, checks: [check('a', 1, 1)] }).allowed).toBe(true);
  });

  describe('exact cleanup', () => {
    it('drops a bucket once it is full, not a moment before', () => {
      const store = new MemoryStore();
      const fast = Array.from({ length: 10 }, (_, i) => check(`fast-${i}`, 1, 1)); // full again at 1000
      const slow = Array.from({ length: 10 }, (_, i) => check(`slow-${i}`, 0.5, 1)); // full again at 2000
      for (const c of [...fast, ...slow]) store.consume({ now: 0, checks: [c] });
      expect(store.size).toBe(20);

      // 1 ms early: however many decisions, nothing is dropped and every bucket is still charged.
      for (let i = 0; i < 100; i++) store.consume(sweepOnly(999));
      expect(store.size).toBe(20);
      for (const c of fast) expect(remainingOf(store, c, 999)).toBe(0);

      // At 1000 the fast buckets are full: a handful of decisions drop all of them, and only them.
      let calls = 0;
      while (store.size > 10 && calls < 200) {
        store.consume(sweepOnly(1000));
        calls++;
      }
      expect(store.size).toBe(10);
      // "a couple of entries every eighth decision" (when no bucket is added): 20 entries in <= 80 calls
      expect(calls).toBeLessThanOrEqual(80);
      for (let i = 0; i < 100; i++) store.consume(sweepOnly(1999));
      expect(store.size).toBe(10);
      for (const c of slow) expect(remainingOf(store, c, 1999)).toBe(0);

      calls = 0;
      while (store.size > 0 && calls < 200) {
        store.consume(sweepOnly(2000));
        calls++;
      }
      expect(store.size).toBe(0);
      expect(store.evictions).toBe(0);
    });

    it('every new bucket pays a sweep step: a stream of new callers reclaims full buckets as fast as it adds', () => {
      const store = new MemoryStore();
      for (let i = 0; i < 100; i++) store.consume({ now: 0, checks: [check(`old-${i}`, 1, 1)] }); // full again at 1000
      for (let i = 0; i < 100; i++) store.consume({ now: 1000, checks: [check(`new-${i}`, 1, 1)] });
      // 100 new buckets, a step of 2 each: a pass over the old ones and the new ones so far; every old one is gone.
      expect(store.size).toBe(100);
    });

    it('cleanup never changes a decision: matches a reference that never forgets, over a random workload', () => {
      // The store computes relative to its first `now`: ms fields may differ from the
      // reference in the last bits at Date.now() magnitudes, decisions may not.
      const matches = (actual: ConsumeResult, expected: ConsumeResult) =>
        actual.allowed === expected.allowed &&
        actual.decisions.every((d, i) => {
          const e = expected.decisions[i]!;
          return (
            d.allowed === e.allowed &&
            d.remaining === e.remaining &&
            d.reason === e.reason &&
            Math.abs(d.resetMs - e.resetMs) < 1e-3 &&
            (d.retryAfterMs === e.retryAfterMs || Math.abs(d.retryAfterMs - e.retryAfterMs) < 1e-3)
          );
        });
      const rand = seededRandom(0xc0ffee);
      const store = new MemoryStore({ maxKeys: 1_000_000 });
      const reference = new Map<string, number>();
      // Reference semantics, never deleting anything.
      const referenceConsume = ({ checks, now }: TokenBucketRequest): ConsumeResult => {
        const outcomes = checks.map((c) => gcraConsume(reference.get(c.key), now, c.limit, c.cost));
        const allowed = outcomes.every((o) => o.decision.allowed);
        const decisions = outcomes.map((o, i): RateLimitDecision =>
          allowed || !o.decision.allowed
            ? o.decision
            : gcraPeek(reference.get(checks[i]!.key), now, checks[i]!.limit),
        );
        if (allowed) outcomes.forEach((o, i) => reference.set(checks[i]!.key, o.tat));
        return { allowed, decisions };
      };
      const limits = [
        { rate: 1, burst: 1 },
        { rate: 3, burst: 3 },
        { rate: 10, burst: 5 },
        { rate: 0.5, burst: 2 },
      ].map(({ rate, burst }) => tokenBucket(rate, burst));
      let now = 1_700_000_000_000;
      let dropped = 0;
      let previousSize = 0;
      let denied = 0;
      const mismatches: unknown[] = [];
      for (let step = 0; step < 20_000; step++) {
        now += rand() < 0.5 ? 0 : Math.floor(rand() * 400);
        const n = 1 + Math.floor(rand() * 3);
        const keys = new Set<number>();
        while (keys.size < n) keys.add(Math.floor(rand() * 60));
        const checks = [...keys].map((k) => ({
          key: `k${k}`,
          limit: limits[k % limits.length]!,
          cost: 1 + Math.floor(rand() * 2),
        }));
        const request = { now, checks };
        const actual = store.consume(request);
        const expected = referenceConsume(request);
        if (!actual.allowed) denied++;
        if (!matches(actual, expected) && mismatches.length < 3)
          mismatches.push({ step, request, actual, expected });
        if (store.size < previousSize) dropped++;
        previousSize = store.size;
      }
      expect(mismatches).toEqual([]);
      // The workload did exercise denials and the sweep.
      expect(denied).toBeGreaterThan(1000);
      expect(dropped).toBeGreaterThan(100);
      expect(store.evictions).toBe(0);
    });
  });

  describe('maxKeys', () => {
    it('is a hard cap: 3 x maxKeys distinct keys never hold more than maxKeys, and the overflow is counted', () => {
      const maxKeys = 1000;
      const store = new MemoryStore({ maxKeys });
      // rate 1/h: every bucket stays charged for the whole test, so nothing is swept.
      const limit = tokenBucket(1 / 3600, 2);
      let maxSize = 0;
      for (let i = 0; i < 3 * maxKeys; i++) {
        const result = store.consume({ now: i, checks: [{ key: `key-${i}`, limit, cost: 1 }] });
        expect(result.allowed).toBe(true);
        maxSize = Math.max(maxSize, store.size);
        if (store.size > maxKeys)
          throw new Error(`size ${store.size} > maxKeys ${maxKeys} after key ${i}`);
      }
      expect(maxSize).toBe(maxKeys);
      expect(store.size).toBe(maxKeys);
      expect(store.evictions).toBe(2 * maxKeys);
      // The survivors are the last maxKeys charged; the evicted ones are full buckets again.
      expect(
        remainingOf(store, check(`key-${3 * maxKeys - 1}`, limit.rate, limit.burst), 3 * maxKeys),
      ).toBe(1);
      expect(
        remainingOf(store, check(`key-${2 * maxKeys}`, limit.rate, limit.burst), 3 * maxKeys),
      ).toBe(1);
      expect(
        remainingOf(store, check(`key-${2 * maxKeys - 1}`, limit.rate, limit.burst), 3 * maxKeys),
      ).toBe(2);
      expect(remainingOf(store, check('key-0', limit.rate, limit.burst), 3 * maxKeys)).toBe(2);
    });

    it('evicts, among buckets equally far from full, the oldest', () => {
      const store = new MemoryStore({ maxKeys: 3 });
      const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((k) => check(k, 1, 2));
      for (const x of [a!, b!, c!]) store.consume({ now: 0, checks: [x] }); // 1 left each
      store.consume({ now: 0, checks: [a!] }); // a charged again: further from full than b and c, which tie; b is older
      store.consume({ now: 0, checks: [d!] });
      expect(store.evictions).toBe(1);
      expect(store.size).toBe(3);
      expect(remainingOf(store, b!, 0)).toBe(2); // evicted: full again
      expect(remainingOf(store, a!, 0)).toBe(0);
      expect(remainingOf(store, c!, 0)).toBe(1);
      expect(remainingOf(store, d!, 0)).toBe(1);
    });

    it('evicts the bucket closest to full, not a denied one that was charged earlier', () => {
      const store = new MemoryStore({ maxKeys: 2 });
      const [a, b, c] = ['a', 'b', 'c'].map((k) => check(k, 1, 2));
      store.consume({ now: 0, checks: [a!] });
      store.consume({ now: 0, checks: [a!] }); // a empty (TAT 2000)
      store.consume({ now: 10, checks: [b!] }); // b half full (TAT 1010), charged later
      expect(store.consume({ now: 20, checks: [a!] }).allowed).toBe(false);
      store.consume({ now: 20, checks: [c!] });
      expect(store.evictions).toBe(1);
      expect(remainingOf(store, b!, 20)).toBe(2); // evicted: full again
      expect(remainingOf(store, a!, 20)).toBe(0); // still empty
      expect(remainingOf(store, c!, 20)).toBe(1);
    });

    it('a bucket already full again goes first, whatever its place (no decision changes); never the key just added', () => {
      const shard = new BucketShard();
      shard.add('slow', 3_600_000);
      shard.add('fast', 1);
      shard.add('mid', 1000);
      shard.add('new', 0.5);
      expect(shard.evictClosestToFull(5, 'new')).toBe(true);
      expect([...shard.keys()]).toEqual(['slow', 'mid', 'new']);
      expect(shard.evictClosestToFull(5, 'new')).toBe(true);
      expect([...shard.keys()]).toEqual(['slow', 'new']);
      expect(shard.evictClosestToFull(5, 'new')).toBe(true);
      expect(shard.evictClosestToFull(5, 'new')).toBe(false);
      expect([...shard.keys()]).toEqual(['new']);
    });

    it('charging a key already held never evicts', () => {
      const store = new MemoryStore({ maxKeys: 2 });
      const a = check('a', 1, 100);
      store.consume({ now: 0, checks: [check('b', 1, 100)] });
      for (let i = 0; i < 50; i++) store.consume({ now: 0, checks: [a] });
      expect(store.size).toBe(2);
      expect(store.evictions).toBe(0);
    });

    it('defaults to a cap that admits many keys without evicting', () => {
      const store = new MemoryStore();
      for (let i = 0; i < 5000; i++)
        store.consume({ now: 0, checks: [check(`k${i}`, 1 / 3600, 1)] });
      expect(store.size).toBe(5000);
      expect(store.evictions).toBe(0);
    });

    it.each([0, -1, 1.5, NaN])(
      'rejects maxKeys = %p with a TypeError naming maxKeys',
      (maxKeys) => {
        expect(() => new MemoryStore({ maxKeys })).toThrow(TypeError);
        expect(() => new MemoryStore({ maxKeys })).toThrow(/maxKeys/);
      },
    );

    it.each([
      ['one shard', 100, 1_000],
      ['four shards', 65_536, 70_000],
    ])(
      'a denied bucket is not handed back by minting keys under the same limit (%s, maxKeys %p, %p new keys)',
      (_shards, maxKeys, minted) => {
        // Issue 15, item 4: a 5/hour login limit per account. The attacker drains
        // the victim's bucket, then mints accounts (one charge each) to evict it.
        const store = new MemoryStore({ maxKeys });
        const limit = tokenBucket(5 / 3600, 5);
        const victim = { key: 'login|victim', limit, cost: 1 };
        let admitted = 0;
        for (let i = 0; i < 10; i++)
          if (store.consume({ now: i, checks: [victim] }).allowed) admitted++;
        expect(admitted).toBe(5);
        for (let i = 0; i < minted; i++) {
          const now = 10 + i / 1000; // the whole attack within ~70 s: nothing refills on its own
          expect(
            store.consume({ now, checks: [{ key: `login|user-${i}`, limit, cost: 1 }] }).allowed,
          ).toBe(true);
          if (i % 10 === 0 && store.consume({ now, checks: [victim] }).allowed) admitted++;
        }
        expect(store.evictions).toBeGreaterThan(0);
        expect(admitted).toBe(5);
        expect(store.size).toBeLessThanOrEqual(maxKeys);
      },
    );

    it('accepts maxKeys = 1 (each new key evicts the previous one)', () => {
      const store = new MemoryStore({ maxKeys: 1 });
      store.consume({ now: 0, checks: [check('a', 1, 1)] });
      store.consume({ now: 0, checks: [check('b', 1, 1)] });
      expect(store.size).toBe(1);
      expect(store.evictions).toBe(1);
    });
  });
});
