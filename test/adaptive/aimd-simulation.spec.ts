/**
 * Closed-loop checks of the adaptive limit with its defaults, against the
 * modelled downstreams of `aimd-simulation.ts` (the same code draws the
 * figures in docs/adaptive.md). Counts are in evaluation windows (1 s).
 */
import {
  LATENCY_SCENARIO,
  REFERENCE_SCENARIO,
  REFERENCE_SEED,
  analyse,
  simulate,
  type PhaseReport,
} from './aimd-simulation.js';

/** Jitter seeds checked here; `npm run docs:plots` sweeps 100 (jest's VM runs this loop ~20× slower than node). */
const SEEDS = Array.from({ length: 10 }, (_, i) => i + 1);

function reportsOf(seed: number): PhaseReport[] {
  return analyse(simulate(REFERENCE_SCENARIO, seed), REFERENCE_SCENARIO.phases);
}

function phase(reports: PhaseReport[], index: number): PhaseReport {
  const report = reports[index];
  if (report === undefined) throw new Error(`no phase ${index}`);
  return report;
}

describe('AIMD simulation: downstream that rejects above its capacity, offered load 3× capacity', () => {
  const reports = reportsOf(REFERENCE_SEED);
  const [initial, halved, recovered] = [phase(reports, 0), phase(reports, 1), phase(reports, 2)];

  it('starts from the declared 150/s against a capacity of 100/s', () => {
    expect(initial.startRate).toBe(150);
    expect(initial.capacity).toBe(100);
  });

  it('settles within ±20 % of capacity within 30 windows and stays there', () => {
    expect(initial.settledWindows).toBeDefined();
    expect(initial.settledWindows).toBeLessThanOrEqual(30);
    const [low, high] = initial.bandAfterSettling ?? [0, 0];
    expect(low).toBeGreaterThanOrEqual(0.8);
    expect(high).toBeLessThanOrEqual(1.2);
  });

  it('keeps the sustained sawtooth inside the band, admitting about the capacity with few failures', () => {
    for (const report of reports) {
      expect(report.steadyBand[0]).toBeGreaterThanOrEqual(0.8);
      expect(report.steadyBand[1]).toBeLessThanOrEqual(1.2);
      expect(report.steadyAdmitted).toBeGreaterThan(0.9);
      expect(report.steadyAdmitted).toBeLessThan(1.1);
      expect(report.steadyBadShare).toBeLessThan(0.1);
    }
  });

  it('when capacity halves, cuts in the first window and is inside the new band within 3 windows', () => {
    expect(halved.capacity).toBe(50);
    expect(halved.startRate).toBeGreaterThan(60); // it was outside the new band
    expect(halved.firstReactionWindows).toBe(1);
    expect(halved.settledWindows).toBeLessThanOrEqual(3);
  });

  it('when capacity recovers, climbs back into the band and stays', () => {
    expect(recovered.startRate).toBeLessThan(80);
    expect(recovered.firstReactionWindows).toBeLessThanOrEqual(3);
    expect(recovered.settledWindows).toBeLessThanOrEqual(30);
  });

  it.each(SEEDS)('holds the same guarantees with jitter seed %i', (seed) => {
    const [a, b, c] = [0, 1, 2].map((i) => phase(reportsOf(seed), i));
    expect(a?.settledWindows).toBeLessThanOrEqual(30);
    expect(b?.settledWindows).toBeLessThanOrEqual(3);
    expect(c?.settledWindows).toBeLessThanOrEqual(30);
    for (const report of [a, b, c]) {
      expect(report?.steadyBand[0]).toBeGreaterThanOrEqual(0.8);
      expect(report?.steadyBand[1]).toBeLessThanOrEqual(1.2);
    }
  });

  it('is deterministic: same seed, same run', () => {
    expect(simulate(REFERENCE_SCENARIO, 7)).toEqual(simulate(REFERENCE_SCENARIO, 7));
  });

  it('without adaptation (min = max = declared) the downstream fails a third of what is admitted', () => {
    const fixed = { ...REFERENCE_SCENARIO, adaptive: { min: 150, max: 150 } };
    const steady = analyse(simulate(fixed), fixed.phases);
    expect(phase(steady, 0).steadyBadShare).toBeGreaterThan(0.3);
    expect(phase(steady, 1).steadyBadShare).toBeGreaterThan(0.6);
  });
});

describe('AIMD simulation: queueing downstream, latency target 100 ms, late feedback', () => {
  it.each(SEEDS)('keeps the queue short and most of the capacity in use (seed %i)', (seed) => {
    for (const report of analyse(simulate(LATENCY_SCENARIO, seed), LATENCY_SCENARIO.phases)) {
      expect(report.steadyMaxLatencyMs).toBeLessThan(400);
      expect(report.steadyAdmitted).toBeGreaterThan(0.75);
      expect(report.steadyBand[1]).toBeLessThanOrEqual(1.2);
    }
  });

  it('where a fixed limit lets requests queue up to the timeout', () => {
    const fixed = { ...LATENCY_SCENARIO, adaptive: { min: 150, max: 150, latencyTargetMs: 100 } };
    const reports = analyse(simulate(fixed), fixed.phases);
    expect(Math.max(...reports.map((r) => r.steadyMaxLatencyMs))).toBeGreaterThanOrEqual(1000);
  });
});
