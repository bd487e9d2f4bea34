import { seededRandom } from '../../../adaptive/seeded-random.js';
import {
  AdaptiveConcurrency,
  type AdaptiveAnswer,
  type AdaptiveConcurrencyConfig,
} from '../adaptive-concurrency.js';
import { SimClock } from './sim-clock.js';

/**
 * A downstream of capacity C whose latency grows with the calls in flight
 * beyond C (`noLoadMs × max(1, inFlight / C)`, ± `jitter`), offered
 * Poisson traffic through one adaptive limit (or none), on a
 * {@link SimClock}: a minute of traffic in milliseconds, deterministic for a
 * seed. What the unit tests and `npm run bench` measure the controller with.
 *
 * @internal
 */
export interface SimulationOptions {
  readonly durationMs: number;
  /** The downstream's capacity over time (calls in flight before latency grows). */
  readonly capacity: (atMs: number) => number;
  /** Latency of one call when the downstream is not overloaded (over time). @default 50 */
  readonly noLoadMs?: number | ((atMs: number) => number);
  /** Each latency is multiplied by a factor in [1 - jitter, 1 + jitter]. @default 0.1 */
  readonly jitter?: number;
  /** Calls offered per second, per partition (one entry without partitions). */
  readonly offeredPerSecond: readonly number[];
  /** The limit in front of the downstream; undefined: none. */
  readonly limit: AdaptiveConcurrencyConfig | undefined;
  readonly seed?: number;
  /** Width of a timeline point. @default 1000 */
  readonly bucketMs?: number;
}

/** One point of the timeline: the end of its bucket. */
export interface SimulationPoint {
  readonly atMs: number;
  /** Limit in force at the end of the bucket (undefined: no limit). */
  readonly limit: number | undefined;
  /** Calls in flight at the downstream at the end of the bucket. */
  readonly inFlight: number;
  /** Calls completed in the bucket, per second. */
  readonly goodput: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface SimulationResult {
  readonly timeline: SimulationPoint[];
  /** Completed calls per second over the window measured. */
  readonly goodput: number;
  /** Latency of the calls completed (waiting in the backlog included), milliseconds. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Per partition: calls offered and calls served. */
  readonly partitions: { offered: number; served: number }[];
  /** The limit after each change, with its time. */
  readonly changes: { atMs: number; limit: number }[];
}

export function simulate(options: SimulationOptions, measureFromMs = 0): SimulationResult {
  const clock = new SimClock();
  const random = seededRandom(options.seed ?? 1);
  const noLoad = options.noLoadMs ?? 50;
  const noLoadMs = typeof noLoad === 'number' ? () => noLoad : noLoad;
  const jitter = options.jitter ?? 0.1;
  const bucketMs = options.bucketMs ?? 1000;
  const changes: { atMs: number; limit: number }[] = [];
  const gate =
    options.limit &&
    new AdaptiveConcurrency(options.limit, clock, (change) =>
      changes.push({ atMs: clock.now(), limit: change.to }),
    );
  const partitions = options.offeredPerSecond.map(() => ({ offered: 0, served: 0 }));
  let downstream = 0;
  let bucket: number[] = [];
  const all: number[] = [];
  const timeline: SimulationPoint[] = [];

  const call = (partition: number, arrivedAt: number, done: () => void): void => {
    downstream++;
    const excess = Math.max(1, downstream / options.capacity(clock.now()));
    const latency = noLoadMs(clock.now()) * excess * (1 - jitter + 2 * jitter * random());
    clock.setTimer(latency, () => {
      downstream--;
      const took = clock.now() - arrivedAt;
      bucket.push(took);
      if (clock.now() >= measureFromMs) {
        all.push(took);
        partitions[partition]!.served++;
      }
      done();
    });
  };
  const arrive = (partition: number): void => {
    const arrivedAt = clock.now();
    if (arrivedAt >= measureFromMs) partitions[partition]!.offered++;
    if (gate === undefined) return call(partition, arrivedAt, () => undefined);
    const admitted = (answer: AdaptiveAnswer): void => {
      if (answer.allowed) call(partition, arrivedAt, () => answer.ticket.release(false));
    };
    const now = gate.request('downstream', partition, undefined, admitted);
    if (now !== undefined) admitted(now);
  };
  options.offeredPerSecond.forEach((perSecond, partition) => {
    if (perSecond <= 0) return;
    const next = (): void => {
      const gap = (-Math.log(1 - random()) * 1000) / perSecond;
      clock.setTimer(gap, () => {
        if (clock.now() >= options.durationMs) return;
        arrive(partition);
        next();
      });
    };
    next();
  });
  for (let at = bucketMs; at <= options.durationMs; at += bucketMs) {
    clock.runUntil(at);
    const sorted = bucket.sort((a, b) => a - b);
    timeline.push({
      atMs: at,
      limit: gate?.snapshot('downstream')?.limit,
      inFlight: downstream,
      goodput: (sorted.length * 1000) / bucketMs,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99),
    });
    bucket = [];
  }
  gate?.close();
  const sorted = all.sort((a, b) => a - b);
  return {
    timeline,
    goodput: (sorted.length * 1000) / (options.durationMs - measureFromMs),
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    partitions,
    changes,
  };
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
