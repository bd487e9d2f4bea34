/**
 * Which state MemoryStore evicts at `maxKeys`, per kind of state it holds:
 * the one whose loss admits least (`eviction-order.ts`). Token buckets,
 * settle debts and token-bucket blocks are TATs; fixed, anchored, calendar
 * and sliding windows and anchored-window blocks are window states;
 * concurrency slots are not buckets (`memory-slots.ts`: never evicted).
 */
import type { WindowState } from '../../lib/algorithms/window-state.js';
import type {
  FixedWindowLimit,
  StoreLimit,
  WindowLimit,
} from '../../lib/store/rate-limit-store.interface.js';
import { tokenBucket } from '../../test/utils/checks.js';
import { BucketShard, type BlockedStates } from './bucket-shard.js';
import { evictsBefore, windowHeld } from './eviction-order.js';
import { MemoryStore } from './memory.store.js';

const T = 1_700_000_040_000; // a multiple of 60 s
const HOUR = 3_600_000;
/** Keys as the module shapes them: one namespace (one table), as a throttler's. */
const NS = 'fw|throttler:default|*|';
const anchored = (quota: number): FixedWindowLimit => ({
  algorithm: 'fixed-window',
  quota,
  windowMs: HOUR,
  anchor: 'first-hit',
});
const window = (start: number, count: number, previous = 0, length = 60_000): WindowState => ({
  start,
  end: start + length,
  count,
  previous,
  expires: start + (previous > 0 ? 2 : 1) * length,
});

function charge(store: MemoryStore, key: string, limit: StoreLimit, now: number, times = 1): void {
  for (let i = 0; i < times; i++) store.consume({ checks: [{ key, limit, cost: 1 }], now });
}
const remaining = (store: MemoryStore, key: string, limit: StoreLimit, now: number) =>
  store.peek({ checks: [{ key, limit }], now }).decisions[0]!.remaining;

describe('MemoryStore eviction order', () => {
  describe('evictsBefore (pure)', () => {
    it('token buckets: the earliest TAT (closest to full) goes', () => {
      expect(evictsBefore(10, false, 20, false, 0, 0)).toBe(true);
      expect(evictsBefore(20, false, 10, false, 0, 0)).toBe(false);
    });

    it('windows: the least count held goes, whatever the ends', () => {
      // Begun before a flood (ends first), holding the quota, against a flood window of 1.
      expect(evictsBefore(window(T, 5), false, window(T + 30_000, 1), false, 40_000, T)).toBe(
        false,
      );
      expect(evictsBefore(window(T + 30_000, 1), false, window(T, 5), false, 40_000, T)).toBe(true);
    });

    it('windows holding as much: the one that ends first goes', () => {
      expect(evictsBefore(window(T, 2), false, window(T + 10, 2), false, 20, T)).toBe(true);
      expect(evictsBefore(window(T + 10, 2), false, window(T, 2), false, 20, T)).toBe(false);
    });

    it('sliding windows: the previous count weighs as the estimate weighs it', () => {
      const at = T + 45_000; // three quarters into the window: previous weighs 1/4
      expect(windowHeld(window(T, 1, 8), at)).toBeCloseTo(3);
      expect(windowHeld(window(T, 1, 8), T - 1)).toBeCloseTo(9); // clock went back: full weight
      // After its end the count becomes the previous one, sliding out.
      expect(windowHeld(window(T, 4, 0, 60_000), T + 90_000)).toBe(0); // a fixed window ended
      expect(windowHeld(window(T, 4, 1, 60_000), T + 90_000)).toBeCloseTo(2);
      expect(windowHeld(window(T, 4, 1, 60_000), T + 120_000)).toBe(0);
      // 1 + 8/4 = 3 held against 2: the sliding window is kept.
      expect(evictsBefore(window(T, 2), false, window(T, 1, 8), false, 45_000, T)).toBe(true);
    });

    it('a state serving a block is kept over any other, of any kind', () => {
      expect(evictsBefore(window(T, 100), false, window(T, 1), true, 0, T)).toBe(true);
      expect(evictsBefore(window(T, 1), true, window(T, 100), false, 0, T)).toBe(false);
      expect(evictsBefore(1e9, false, 10, true, 0, 0)).toBe(true);
      // Two blocks: the ordinary rule between them.
      expect(evictsBefore(10, true, 20, true, 0, 0)).toBe(true);
    });

    it('states of two kinds (a store called with raw keys): the one that stops mattering first goes', () => {
      expect(evictsBefore(1_000, false, window(T, 1), false, 0, T)).toBe(true); // TAT 1 s, window 60 s
      expect(evictsBefore(window(T, 1), false, 120_000, false, 0, T)).toBe(true);
    });
  });

  describe('BucketShard.evictClosestToFull', () => {
    it('keeps a blocked candidate while another can go, then evicts among blocked ones by the rules', () => {
      const shard = new BucketShard(NS);
      shard.add('blocked', window(T, 1));
      shard.add('full-window', window(T, 50));
      shard.add('new', window(T, 1));
      const blocks: BlockedStates = { serving: (ns, id) => ns === NS && id === 'blocked' };
      expect(shard.evictClosestToFull(10, 'new', T, blocks)).toBe(true);
      expect([...shard.keys()]).toEqual(['blocked', 'new']);
      expect(shard.evictClosestToFull(10, 'new', T, blocks)).toBe(true);
      expect([...shard.keys()]).toEqual(['new']);
    });

    it('an expired state goes first, blocked or not (its loss changes no decision)', () => {
      const shard = new BucketShard(NS);
      shard.add('live', window(T, 1));
      shard.add('ended', window(T - 120_000, 5));
      const blocks: BlockedStates = { serving: () => true };
      expect(shard.evictClosestToFull(0, undefined, T, blocks)).toBe(true);
      expect([...shard.keys()]).toEqual(['live']);
    });
  });

  describe('through MemoryStore at maxKeys', () => {
    it('anchored windows: a window holding its quota outlives fresher ones holding less', () => {
      const store = new MemoryStore({ maxKeys: 3 });
      const limit = anchored(5);
      charge(store, `${NS}victim`, limit, T, 5); // at its quota, ends first
      for (let i = 0; i < 20; i++) charge(store, `${NS}minted-${i}`, limit, T + 1 + i);
      expect(store.evictions).toBe(18);
      expect(remaining(store, `${NS}victim`, limit, T + 100)).toBe(0);
    });

    it('fixed and sliding windows: the one holding more is kept though charged first', () => {
      for (const limit of [
        { algorithm: 'fixed-window', quota: 5, windowMs: 60_000 },
        { algorithm: 'sliding-window', quota: 5, windowMs: 60_000 },
      ] satisfies WindowLimit[]) {
        const store = new MemoryStore({ maxKeys: 2 });
        charge(store, `${NS}heavy`, limit, T, 4);
        for (let i = 0; i < 10; i++) charge(store, `${NS}light-${i}`, limit, T + 1 + i);
        expect(remaining(store, `${NS}heavy`, limit, T + 100)).toBe(1);
      }
    });

    it('an anchored-window block is kept over a window holding more under a larger quota (one throttler, two routes)', () => {
      const store = new MemoryStore({ maxKeys: 2 });
      const login = anchored(5);
      const search = anchored(100);
      charge(store, `${NS}login-victim`, login, T, 5);
      store.block({
        checks: [{ key: `${NS}login-victim`, limit: login, durationMs: HOUR }],
        now: T,
      });
      charge(store, `${NS}search-caller`, search, T + 1, 50); // 50 held, more than the block's 5
      charge(store, `${NS}minted`, login, T + 2);
      expect(store.evictions).toBe(1);
      expect(remaining(store, `${NS}login-victim`, login, T + 3)).toBe(0);
      expect(remaining(store, `${NS}search-caller`, search, T + 3)).toBe(100); // evicted
    });

    it("a blocked caller alone in one limit's table outlives a flood in another's (tables are taken in turn)", () => {
      const store = new MemoryStore({ maxKeys: 100 });
      const login = anchored(5);
      const victim = 'fw|throttler:login|*|victim';
      charge(store, victim, login, T, 6);
      store.block({ checks: [{ key: victim, limit: login, durationMs: HOUR }], now: T });
      for (let i = 0; i < 1_000; i++)
        charge(store, `fw|throttler:search|*|minted-${i}`, anchored(5), T + 1 + i);
      expect(store.evictions).toBe(901);
      expect(remaining(store, victim, login, T + 2_000)).toBe(0);
    });

    it('when every candidate serves a block, one still goes: the cap holds', () => {
      const store = new MemoryStore({ maxKeys: 10 });
      const limit = anchored(1);
      for (let i = 0; i < 30; i++) {
        const key = `${NS}blocked-${i}`;
        charge(store, key, limit, T + i);
        store.block({ checks: [{ key, limit, durationMs: HOUR }], now: T + i });
        expect(store.size).toBeLessThanOrEqual(10);
      }
      expect(store.evictions).toBe(20);
    });

    it('a token-bucket block and a settle debt outlive buckets closer to full', () => {
      const store = new MemoryStore({ maxKeys: 3 });
      const limit = tokenBucket(1, 10);
      const tb = 'tb|api|*|';
      charge(store, `${tb}blocked`, limit, 0);
      store.block({ checks: [{ key: `${tb}blocked`, limit, durationMs: 60_000 }], now: 0 });
      store.settle({
        checks: [{ key: `${tb}in-debt`, limit, delta: 30 }],
        now: 0,
      });
      for (let i = 0; i < 10; i++) charge(store, `${tb}minted-${i}`, limit, 1 + i);
      expect(remaining(store, `${tb}blocked`, limit, 20)).toBe(0);
      expect(remaining(store, `${tb}in-debt`, limit, 20)).toBe(0);
    });
  });
});
