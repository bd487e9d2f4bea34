/**
 * A deterministic closed-loop simulation of an adaptive limit in front of a
 * downstream with a finite capacity. Shared by `aimd-simulation.spec.ts`
 * (assertions) and `scripts/plot-adaptive.ts` (the figures in
 * docs/adaptive.md), so the pictures are exactly what the tests check.
 *
 * The loop, per request (evenly spaced arrivals at the offered load):
 * 1. the limiter (GCRA with the controller's effective rate and burst, one
 *    global bucket) admits or denies; denials are not outcomes;
 * 2. an admitted request reaches the downstream, which has capacity C
 *    requests/s and is one of:
 *    - `reject`: its own token bucket of rate C and a small burst; what it
 *      cannot take fails at once (a 503), everything else succeeds at once;
 *    - `queue`: a FIFO server taking 1/C s per request; the outcome is the
 *      latency (`{ latencyMs }`) and arrives when the request completes, so
 *      feedback is late, as in real life; a request that would wait past
 *      `timeoutMs` fails at its timeout (`{ latencyMs, failed: true }`) and
 *      takes no service time;
 * 3. the outcome goes to the controller at the time it happens.
 * Time comes from a ManualClock; nothing sleeps.
 */
import { gcraConsume, type BucketLimit } from '../../lib/algorithms/gcra.js';
import { AdaptiveController } from '../../lib/adaptive/adaptive-controller.js';
import type { AdaptiveOptions } from '../../lib/interfaces/adaptive-options.interface.js';
import type { AdaptiveOutcome } from '../../lib/adaptive/adaptive-outcome.js';
import { resolveAdaptiveOptions } from '../../lib/adaptive/resolve-adaptive-options.js';
import { seededRandom } from '../../lib/adaptive/seeded-random.js';
import { ManualClock } from '../../lib/clock.js';

/** Capacity `capacity` requests/s from `fromMs` until the next phase. */
export interface CapacityPhase {
  readonly fromMs: number;
  readonly capacity: number;
}

/** How the downstream answers (see the file comment). */
export type DownstreamModel =
  | {
      readonly kind: 'reject';
      /** Bucket size in seconds of capacity. */ readonly burstSeconds: number;
    }
  | { readonly kind: 'queue'; readonly baseLatencyMs: number; readonly timeoutMs: number };

export interface SimulationScenario {
  /** The limit as declared: where the effective rate starts. */
  readonly declared: BucketLimit;
  /** The limit's `adaptive` option (defaults apply to what is left out). */
  readonly adaptive: AdaptiveOptions;
  /** Requests per second offered to the limiter, evenly spaced. */
  readonly offeredPerSecond: number;
  /** Downstream capacity over time, first phase at 0, in order. */
  readonly phases: readonly CapacityPhase[];
  readonly downstream: DownstreamModel;
  /** Length of the run, ms. */
  readonly durationMs: number;
}

/** The state at the end of one second (one evaluation window at the default interval). */
export interface SimulationSample {
  /** End of the second, ms. */
  readonly tMs: number;
  readonly offered: number;
  readonly capacity: number;
  /** Effective rate after the window that just closed, tokens/s. */
  readonly rate: number;
  /** Requests the limiter admitted during the second. */
  readonly admitted: number;
  /** Outcomes recorded during the second that counted as bad (failures and congestion signals). */
  readonly bad: number;
  /** Outcomes recorded during the second. */
  readonly outcomes: number;
  /** Highest latency among outcomes recorded during the second (`queue` model), ms. */
  readonly maxLatencyMs: number;
}

const PHASES: readonly CapacityPhase[] = [
  { fromMs: 0, capacity: 100 },
  { fromMs: 60_400, capacity: 50 },
  { fromMs: 120_400, capacity: 100 },
];

/**
 * The main figure's scenario: capacity 100/s, halved to 50/s at 60.4 s, back
 * to 100/s at 120.4 s (mid-window on purpose); offered load 300/s (3× the
 * capacity); the limit is declared at 150/s (50 % too optimistic) with
 * `adaptive: { min: 10, max: 300 }` and defaults for everything else.
 * The downstream rejects what it cannot take.
 */
export const REFERENCE_SCENARIO: SimulationScenario = {
  declared: { rate: 150, burst: 30 },
  adaptive: { min: 10, max: 300 },
  offeredPerSecond: 300,
  phases: PHASES,
  downstream: { kind: 'reject', burstSeconds: 0.05 },
  durationMs: 180_000,
};

/**
 * The same load and capacity against a queueing downstream (20 ms of work,
 * 1 s timeout) with `latencyTargetMs: 100`: the limit reacts to latency,
 * reported late (on completion), before anything fails.
 */
export const LATENCY_SCENARIO: SimulationScenario = {
  ...REFERENCE_SCENARIO,
  adaptive: { min: 10, max: 300, latencyTargetMs: 100 },
  downstream: { kind: 'queue', baseLatencyMs: 20, timeoutMs: 1000 },
};

/** Seed of the jitter unless told otherwise. */
export const REFERENCE_SEED = 1;

export function capacityAt(phases: readonly CapacityPhase[], tMs: number): number {
  let capacity = phases[0]?.capacity ?? 0;
  for (const phase of phases) {
    if (phase.fromMs <= tMs) capacity = phase.capacity;
  }
  return capacity;
}

interface PendingOutcome {
  readonly atMs: number;
  readonly outcome: AdaptiveOutcome;
}

/** Run a scenario; one sample at 0 (the declared rate), then one per second. */
export function simulate(scenario: SimulationScenario, seed = REFERENCE_SEED): SimulationSample[] {
  const config = resolveAdaptiveOptions(
    { random: seededRandom(seed), ...scenario.adaptive },
    scenario.declared,
    'simulation',
  );
  const target = config.latencyTargetMs;
  const controller = new AdaptiveController('simulated', config);
  const clock = new ManualClock(0);
  const gapMs = 1000 / scenario.offeredPerSecond;
  const model = scenario.downstream;

  let limiterTat: number | undefined;
  let downstreamTat: number | undefined;
  let busyUntil = 0;
  // Completions of a FIFO server come in time order: a plain array is a queue.
  const pending: PendingOutcome[] = [];
  let pendingHead = 0;
  let second = { admitted: 0, bad: 0, outcomes: 0, maxLatencyMs: 0 };

  const deliver = (upToMs: number): void => {
    for (
      let next = pending[pendingHead];
      next !== undefined && next.atMs <= upToMs;
      next = pending[pendingHead]
    ) {
      pendingHead += 1;
      record(next.outcome, next.atMs);
    }
    if (pendingHead > 4096) {
      pending.splice(0, pendingHead);
      pendingHead = 0;
    }
  };
  const record = (outcome: AdaptiveOutcome, atMs: number): void => {
    clock.set(Math.max(clock.now(), atMs));
    controller.record(outcome, clock.now());
    second.outcomes += 1;
    if (outcome === 'failure') second.bad += 1;
    if (typeof outcome === 'object') {
      second.maxLatencyMs = Math.max(second.maxLatencyMs, outcome.latencyMs);
      if (outcome.failed === true || (target !== undefined && outcome.latencyMs > target))
        second.bad += 1;
    }
  };

  const samples: SimulationSample[] = [
    {
      tMs: 0,
      offered: scenario.offeredPerSecond,
      capacity: capacityAt(scenario.phases, 0),
      rate: config.declared.rate,
      admitted: 0,
      bad: 0,
      outcomes: 0,
      maxLatencyMs: 0,
    },
  ];

  let arrival = 0;
  for (let s = 1; s * 1000 <= scenario.durationMs; s += 1) {
    const endMs = s * 1000;
    for (; arrival * gapMs < endMs; arrival += 1) {
      const t = arrival * gapMs;
      deliver(t);
      clock.set(t);
      const decision = gcraConsume(limiterTat, t, controller.effective(t), 1);
      if (!decision.decision.allowed) continue;
      limiterTat = decision.tat;
      second.admitted += 1;

      const capacity = capacityAt(scenario.phases, t);
      if (model.kind === 'reject') {
        const downstream = gcraConsume(
          downstreamTat,
          t,
          { rate: capacity, burst: Math.max(1, capacity * model.burstSeconds) },
          1,
        );
        if (downstream.decision.allowed) downstreamTat = downstream.tat;
        record(downstream.decision.allowed ? 'success' : 'failure', t);
      } else {
        const done = Math.max(t, busyUntil) + 1000 / capacity;
        const latencyMs = done - t + model.baseLatencyMs;
        if (latencyMs > model.timeoutMs) {
          pending.push({
            atMs: t + model.timeoutMs,
            outcome: { latencyMs: model.timeoutMs, failed: true },
          });
        } else {
          busyUntil = done;
          pending.push({ atMs: t + latencyMs, outcome: { latencyMs } });
        }
        // `pending` stays in time order: a request times out only if it would
        // complete after every earlier one, and any later one completes after
        // the moment the earlier one times out.
      }
    }
    deliver(endMs);
    clock.set(Math.max(clock.now(), endMs));
    samples.push({
      tMs: endMs,
      offered: scenario.offeredPerSecond,
      capacity: capacityAt(scenario.phases, endMs - 1),
      rate: controller.current(clock.now()),
      ...second,
    });
    second = { admitted: 0, bad: 0, outcomes: 0, maxLatencyMs: 0 };
  }
  return samples;
}

/** What the assertions and the docs quote about one capacity phase. */
export interface PhaseReport {
  readonly fromMs: number;
  readonly capacity: number;
  /** Rate when the phase began, tokens/s. */
  readonly startRate: number;
  /**
   * Windows (samples, one per second) into the phase until the rate first
   * moved towards the new capacity; `undefined` if it never did.
   */
  readonly firstReactionWindows: number | undefined;
  /**
   * Windows into the phase until the rate is within ±`band` of the capacity
   * and stays there to the end of the phase; `undefined` if it never does.
   */
  readonly settledWindows: number | undefined;
  /** Lowest / highest rate from settling to the end of the phase, as fractions of capacity. */
  readonly bandAfterSettling: readonly [number, number] | undefined;
  /** Lowest / highest rate over the phase's last 30 windows (the sustained sawtooth), fractions of capacity. */
  readonly steadyBand: readonly [number, number];
  /** Admitted requests per second over the last 30 windows, as a fraction of capacity. */
  readonly steadyAdmitted: number;
  /** Share of outcomes that were bad over the last 30 windows. */
  readonly steadyBadShare: number;
  /** Highest latency of an outcome over the last 30 windows, ms (0 for the `reject` model). */
  readonly steadyMaxLatencyMs: number;
}

/** Windows at the end of a phase that count as its steady state. */
export const STEADY_WINDOWS = 30;

/**
 * Per phase: how fast the rate reacted, when it settled within ±`band` of the
 * capacity for good, and how it behaved afterwards. Counts are in samples
 * (seconds = windows at the default interval), counted from the first sample
 * that ends after the phase began: a phase that starts at 60.4 s has its first
 * sample at 61 s.
 */
export function analyse(
  samples: readonly SimulationSample[],
  phases: readonly CapacityPhase[],
  band = 0.2,
): PhaseReport[] {
  return phases.map((phase, index) => {
    const endMs = phases[index + 1]?.fromMs ?? Number.POSITIVE_INFINITY;
    const inPhase = samples.filter((s) => s.tMs > phase.fromMs && s.tMs <= endMs);
    const startRate = samples.filter((s) => s.tMs <= phase.fromMs).at(-1)?.rate ?? Number.NaN;
    const C = phase.capacity;
    const inBand = (rate: number): boolean => rate >= C * (1 - band) && rate <= C * (1 + band);

    const towards = startRate > C ? (r: number) => r < startRate : (r: number) => r > startRate;
    const reaction = inPhase.findIndex((s) => towards(s.rate));

    let settled: number | undefined;
    for (let i = inPhase.length - 1; i >= 0; i -= 1) {
      const sample = inPhase[i];
      if (sample === undefined || !inBand(sample.rate)) break;
      settled = i;
    }
    const steady = inPhase.slice(-STEADY_WINDOWS);
    const outcomes = steady.reduce((sum, s) => sum + s.outcomes, 0);
    return {
      fromMs: phase.fromMs,
      capacity: C,
      startRate,
      firstReactionWindows: reaction < 0 ? undefined : reaction + 1,
      settledWindows: settled === undefined ? undefined : settled + 1,
      bandAfterSettling: settled === undefined ? undefined : range(inPhase.slice(settled), C),
      steadyBand: range(steady, C),
      steadyAdmitted: steady.reduce((sum, s) => sum + s.admitted, 0) / steady.length / C,
      steadyBadShare: outcomes === 0 ? 0 : steady.reduce((sum, s) => sum + s.bad, 0) / outcomes,
      steadyMaxLatencyMs: Math.max(0, ...steady.map((s) => s.maxLatencyMs)),
    };
  });
}

function range(samples: readonly SimulationSample[], capacity: number): readonly [number, number] {
  const rates = samples.map((s) => s.rate / capacity);
  return [Math.min(...rates), Math.max(...rates)];
}
