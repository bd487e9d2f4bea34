import {
  ADAPTIVE,
  BACKLOGGED,
  capacityChange,
  MEASURE_FROM_MS,
  PARTITIONED,
  STEADY,
  staticAt,
} from './scenarios.js';
import { simulate, type SimulationResult } from './simulate.js';

// The targets, on the scenarios of scenarios.ts (the same as the benchmark's).
// Runs on the simulation's own clock: a minute of traffic in well under a second.
/** Limits at the end of each second from `fromMs` to `toMs`. */
function limits(result: SimulationResult, fromMs: number, toMs: number): number[] {
  return result.timeline.filter((p) => p.atMs >= fromMs && p.atMs <= toMs).map((p) => p.limit!);
}

describe('adaptive concurrency on the simulated downstream', () => {
  it('settles within ±25 % of C = 20 within 10 s and stays there; goodput and p99 against a static limit at C and none', () => {
    const found = simulate({ ...STEADY, limit: ADAPTIVE }, MEASURE_FROM_MS);
    const atC = simulate({ ...STEADY, limit: staticAt(20) }, MEASURE_FROM_MS);
    const none = simulate({ ...STEADY, durationMs: 20_000, limit: undefined }, MEASURE_FROM_MS);
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
    const result = simulate(capacityChange(40, 20, 60_000));
    for (const limit of limits(result, 40_000, 60_000)) {
      expect(limit).toBeGreaterThanOrEqual(15);
      expect(limit).toBeLessThanOrEqual(25);
    }
  });

  it('follows C doubling (20 → 40) within 20 s', () => {
    const result = simulate(capacityChange(20, 40));
    for (const limit of limits(result, 50_000, 70_000)) {
      expect(limit).toBeGreaterThanOrEqual(30);
      expect(limit).toBeLessThanOrEqual(50);
    }
  });

  it('partitions { critical: 0.9, batch: 0.1 }, both overloading it together: critical served ≥ 90 %, batch shed first', () => {
    const result = simulate(PARTITIONED, MEASURE_FROM_MS);
    const [critical, batch] = result.partitions.map((p) => p.served / p.offered);
    expect(critical).toBeGreaterThanOrEqual(0.9);
    expect(batch).toBeLessThan(0.5);
  });

  it('a backlog serves what it holds: goodput at least the refusing limit’s, nothing lost at the end', () => {
    const queued = simulate(BACKLOGGED, MEASURE_FROM_MS);
    const refused = simulate({ ...BACKLOGGED, limit: ADAPTIVE }, MEASURE_FROM_MS);
    expect(queued.goodput).toBeGreaterThanOrEqual(0.98 * refused.goodput);
    // A waiter never waits past its timeout: latency bounded by it plus a call.
    expect(queued.p99Ms).toBeLessThanOrEqual(1000 + 100);
  });

  it('is deterministic for a seed', () => {
    const run = () =>
      simulate({
        ...STEADY,
        durationMs: 5000,
        limit: ADAPTIVE,
        seed: 7,
      });
    expect(run()).toEqual(run());
  });
});
