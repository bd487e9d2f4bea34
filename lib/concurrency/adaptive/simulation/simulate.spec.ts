import { GRADIENT_DEFAULTS } from '../gradient-limit.js';
import type { AdaptiveConcurrencyConfig } from '../adaptive-concurrency.js';
import { simulate, type SimulationResult } from './simulate.js';

// The targets, on the simulated downstream (capacity C in flight, 50 ms
// unloaded, latency × in-flight / C beyond C), offered twice its capacity. Runs
// on the simulation's own clock: a minute of traffic in well under a second.
const controller = { ...GRADIENT_DEFAULTS, min: 2, max: 200, initial: 10 };
const adaptive: AdaptiveConcurrencyConfig = { controller, partitions: [], backlog: undefined };
const staticAt = (c: number): AdaptiveConcurrencyConfig => ({
  controller: { ...controller, min: c, max: c, initial: c },
  partitions: [],
  backlog: undefined,
});

/** Limits at the end of each second from `fromMs` to `toMs`. */
function limits(result: SimulationResult, fromMs: number, toMs: number): number[] {
  return result.timeline.filter((p) => p.atMs >= fromMs && p.atMs <= toMs).map((p) => p.limit!);
}

describe('adaptive concurrency on the simulated downstream', () => {
  it('settles within ±25 % of C = 20 within 10 s and stays there; goodput and p99 against a static limit at C and none', () => {
    const base = { durationMs: 60_000, capacity: () => 20, offeredPerSecond: [800] };
    const found = simulate({ ...base, limit: adaptive }, 10_000);
    const atC = simulate({ ...base, limit: staticAt(20) }, 10_000);
    const none = simulate({ ...base, durationMs: 20_000, limit: undefined }, 10_000);
    for (const limit of limits(found, 10_000, 60_000)) {
      expect(limit).toBeGreaterThanOrEqual(15);
      expect(limit).toBeLessThanOrEqual(25);
    }
    expect(found.goodput).toBeGreaterThanOrEqual(0.9 * atC.goodput);
    expect(found.p99Ms).toBeLessThanOrEqual(100);
    // Without a limit the queue at the downstream grows for as long as the overload lasts.
    expect(none.p99Ms).toBeGreaterThan(10_000);
  });

  it('follows C halving (40 → 20) within 10 s', () => {
    const result = simulate({
      durationMs: 60_000,
      capacity: (t) => (t < 30_000 ? 40 : 20),
      offeredPerSecond: [1600],
      limit: adaptive,
    });
    for (const limit of limits(result, 40_000, 60_000)) {
      expect(limit).toBeGreaterThanOrEqual(15);
      expect(limit).toBeLessThanOrEqual(25);
    }
  });

  it('follows C doubling (20 → 40) within 20 s', () => {
    const result = simulate({
      durationMs: 70_000,
      capacity: (t) => (t < 30_000 ? 20 : 40),
      offeredPerSecond: [1600],
      limit: adaptive,
    });
    for (const limit of limits(result, 50_000, 70_000)) {
      expect(limit).toBeGreaterThanOrEqual(30);
      expect(limit).toBeLessThanOrEqual(50);
    }
  });

  it('partitions { critical: 0.9, batch: 0.1 }, both overloading it together: critical served ≥ 90 %, batch shed first', () => {
    const result = simulate(
      {
        durationMs: 40_000,
        capacity: () => 20,
        offeredPerSecond: [300, 500],
        limit: {
          controller,
          partitions: [
            { name: 'critical', share: 0.9 },
            { name: 'batch', share: 0.1 },
          ],
          backlog: undefined,
        },
      },
      10_000,
    );
    const [critical, batch] = result.partitions.map((p) => p.served / p.offered);
    expect(critical).toBeGreaterThanOrEqual(0.9);
    expect(batch).toBeLessThan(0.5);
  });

  it('a backlog serves what it holds: goodput at least the refusing limit’s, nothing lost at the end', () => {
    const base = { durationMs: 30_000, capacity: () => 20, offeredPerSecond: [800] };
    const queued = simulate(
      { ...base, limit: { ...adaptive, backlog: { size: 100, timeoutMs: 1000 } } },
      10_000,
    );
    const refused = simulate({ ...base, limit: adaptive }, 10_000);
    expect(queued.goodput).toBeGreaterThanOrEqual(0.98 * refused.goodput);
    // A waiter never waits past its timeout: latency bounded by it plus a call.
    expect(queued.p99Ms).toBeLessThanOrEqual(1000 + 100);
  });

  it('is deterministic for a seed', () => {
    const run = () =>
      simulate({
        durationMs: 5000,
        capacity: () => 20,
        offeredPerSecond: [800],
        limit: adaptive,
        seed: 7,
      });
    expect(run()).toEqual(run());
  });
});
