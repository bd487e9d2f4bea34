/**
 * MemoryStore under load: 1,000,000 keys with consume pauses timed against a
 * bound, and heap growth under churn. Slow (~20 s) and timing-sensitive, so
 * in the `fault` project (jest.config.ts); the rest of MemoryStore's spec,
 * memory.store.spec.ts, is a unit spec.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ConsumeRequest } from '../../lib/store/rate-limit-store.interface.js';
import { MemoryStore } from './memory.store.js';
import { tokenBucket } from '../../test/utils/checks.js';

/**
 * Generous bounds: CI machines are shared and noisy (2 cores), so these tests
 * only catch the regressions they were written for (a synchronous pass over
 * the keys, or a 1M-entry Map rehash: far above the bound, figures in README,
 * MemoryStore; O(n) eviction: ~750 µs per call).
 * The pauses themselves are measured by `npm run bench` (docs/benchmarks.md,
 * "MemoryStore per-call pauses").
 */
const PAUSE_BOUND_MS = 50;

/**
 * Collects garbage before a timed section, so a pause left over by the setup
 * (1M keys just allocated) is not billed to the store. `global.gc` only exists
 * with --expose-gc; flipping the flag at run time makes it available to new
 * contexts.
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

interface Timing {
  /** Longest single call, in ms (see {@link timeCalls} for what "long" means). */
  readonly maxMs: number;
  /** Mean cost of a call, in microseconds. */
  readonly meanUs: number;
}

/**
 * Times each call with `process.hrtime.bigint()` (wall) and `process.cpuUsage()`
 * (CPU of the process) and keeps the smaller of the two. On a shared 2-core
 * machine the OS preempts the test for several ms at a time (wall high, CPU
 * near 0), and background V8 threads (compiler, concurrent marking) add CPU
 * without blocking the call (CPU high, wall low). A real synchronous pass over
 * the keys is high in both, so it still shows.
 */
function timeCalls(store: MemoryStore, requests: readonly ConsumeRequest[]): Timing {
  let maxNs = 0;
  let wallTotal = 0n;
  const cpuStart = process.cpuUsage();
  for (const request of requests) {
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    store.consume(request);
    const wall = process.hrtime.bigint() - start;
    const cpu = process.cpuUsage(cpu0);
    wallTotal += wall;
    const ns = Math.min(Number(wall), (cpu.user + cpu.system) * 1000);
    if (ns > maxNs) maxNs = ns;
  }
  const cpuTotal = process.cpuUsage(cpuStart);
  const totalNs = Math.min(Number(wallTotal), (cpuTotal.user + cpuTotal.system) * 1000);
  return { maxMs: maxNs / 1e6, meanUs: totalNs / requests.length / 1e3 };
}

/*
 * One million live keys (the default maxKeys). Filling takes ~2-3 s on a
 * 2-core machine; the store is shared by the tests below, which run in order.
 */
describe('MemoryStore at 1,000,000 keys', () => {
  const FILL = 1_000_000;
  const LONG = tokenBucket(1 / 3600, 1); // stays charged for an hour
  const SHORT = tokenBucket(1, 1); // full again at t = 1000
  let store: MemoryStore;

  beforeAll(() => {
    store = new MemoryStore();
    for (let i = 0; i < FILL; i++) {
      // One key in four is short-lived, so the sweep has something to drop once time passes.
      store.consume({
        now: 0,
        checks: [{ key: `k${i}`, limit: i % 4 === 0 ? SHORT : LONG, cost: 1 }],
      });
    }
  }, 60_000);

  afterAll(() => store.close());

  /**
   * At the cap after a run of new keys: each call adds one bucket, and its
   * sweep step may drop up to two short-lived buckets still waiting to be
   * swept (then nothing is evicted), so a call can leave the store one under.
   */
  const expectAtTheCap = (size: number) => {
    expect(size).toBeLessThanOrEqual(FILL);
    expect(size).toBeGreaterThanOrEqual(FILL - 1);
  };

  it('holds them all (the default cap is 1,000,000)', () => {
    expect(store.size).toBe(FILL);
    expect(store.evictions).toBe(0);
  });

  it('no consume pauses: max of 10,000 calls (new keys at the cap, existing keys, sweeps) < 50 ms', () => {
    const CALLS = 10_000;
    // Built before timing, so only the store is measured.
    const requests: ConsumeRequest[] = [];
    let inserted = 0;
    for (let j = 0; j < CALLS; j++) {
      const existing = j % 4 === 3;
      if (!existing) inserted++;
      const key = existing ? `k${4 * j + 1}` : `new-${j}`; // existing: long-lived keys, charged again
      requests.push({ now: 5000, checks: [{ key, limit: LONG, cost: 1 }] });
    }
    collectGarbage();
    const timing = timeCalls(store, requests);

    // The run did what it claims: the sweep dropped full buckets and new keys evicted old ones.
    const swept = FILL + inserted - store.evictions - store.size;
    expect(swept).toBeGreaterThan(1000);
    expect(store.evictions).toBeGreaterThan(1000);
    expect(store.size).toBeLessThanOrEqual(FILL);
    expect(timing.maxMs).toBeLessThan(PAUSE_BOUND_MS);
  }, 60_000);

  /*
   * Performance under sustained churn at the cap. Both were bugs found by
   * this suite: eviction walked V8's deleted slots (fixed with a persistent
   * eviction cursor) and one 1M-entry Map rehashed in one long pause (fixed
   * by sharding the store; figures in README, MemoryStore).
   *
   * 1. V8 rehashes a Map in one synchronous pass when its table fills up
   *    with entries plus deleted slots: with 1M keys that is one pause far
   *    above the bound, about once per ~50k-1M inserts at the cap.
   * 2. `evictOldest` calls `buckets.keys().next()`, which walks every deleted
   *    slot at the front of the table (V8 keeps them until the next rehash):
   *    each eviction costs O(evictions since the last rehash), up to
   *    0.3-0.7 ms per call measured (a few microseconds expected).
   */
  it('no consume pauses through 60,000 new keys at the cap (crosses a V8 Map rehash): max < 50 ms', () => {
    const requests: ConsumeRequest[] = Array.from({ length: 60_000 }, (_, j) => ({
      now: 6000,
      checks: [{ key: `churn-${j}`, limit: LONG, cost: 1 }],
    }));
    collectGarbage();
    const timing = timeCalls(store, requests);
    expectAtTheCap(store.size);
    expect(timing.maxMs).toBeLessThan(PAUSE_BOUND_MS);
  }, 60_000);

  // The cost of bug 2 grows with the evictions since the last rehash, so it is
  // measured after 150k more of them: ~50-100 us per call measured, ~2 us
  // with a persistent eviction cursor.
  it('a new key at the cap costs O(1): after 150,000 more inserts, the mean of the next 20,000 is < 100 us', () => {
    const churn = (prefix: string, n: number): ConsumeRequest[] =>
      Array.from({ length: n }, (_, j) => ({
        now: 7000,
        checks: [{ key: `${prefix}-${j}`, limit: LONG, cost: 1 }],
      }));
    for (const request of churn('warm', 150_000)) store.consume(request);
    const requests = churn('timed', 20_000);
    collectGarbage();
    const timing = timeCalls(store, requests);
    expectAtTheCap(store.size);
    expect(timing.meanUs).toBeLessThan(100);
  }, 60_000);
});

/*
 * Bounded memory is not only a bounded key count: V8 keeps every table a
 * `Map` outgrows or rehashes alive while an iterator created on it has not
 * moved on, so a sweep or eviction cursor left idle while the buckets churn
 * pinned one more table per rehash. Measured before the fix (MapCursor):
 * +21 MB in this very test, growing without bound with the charges.
 */
describe('MemoryStore heap under churn', () => {
  const heapAfterGc = () => {
    collectGarbage();
    collectGarbage();
    return process.memoryUsage().heapUsed / 2 ** 20;
  };

  it('stays flat while 100,000 live keys are charged 5 times each (no Map tables pinned by idle cursors)', () => {
    const store = new MemoryStore();
    const keys = Array.from({ length: 100_000 }, (_, i) => `k${i}`);
    const limit = tokenBucket(1, 1e9); // never full again, never swept: only the churn of charges
    let now = 0;
    for (const key of keys) store.consume({ now, checks: [{ key, limit, cost: 1 }] });
    const before = heapAfterGc();
    for (let round = 0; round < 5; round++) {
      for (const key of keys)
        store.consume({ now: (now += 0.001), checks: [{ key, limit, cost: 1 }] });
    }
    const grownMb = heapAfterGc() - before;
    expect(store.size).toBe(keys.length);
    expect(grownMb).toBeLessThan(8);
    store.close();
  }, 60_000);
});
