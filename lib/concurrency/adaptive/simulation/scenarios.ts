import type { AdaptiveConcurrencyConfig } from '../adaptive-concurrency.js';
import { GRADIENT_DEFAULTS } from '../gradient-limit.js';
import type { SimulationOptions } from './simulate.js';

/**
 * Issue 31's scenarios on the simulated downstream (capacity C in flight, 50
 * ms unloaded, latency × in-flight / C beyond C), written once: `simulate.spec.ts`
 * checks the targets on them, `bench/concurrency/run.mjs` prints the tables of
 * docs/concurrency.md from them (through dist/).
 *
 * @internal
 */

/** The controller as the docs' example declares it: `{ min: 2, max: 200 }`, initial 10. */
export const CONTROLLER = Object.freeze({ ...GRADIENT_DEFAULTS, min: 2, max: 200, initial: 10 });

export const ADAPTIVE: AdaptiveConcurrencyConfig = Object.freeze({
  controller: CONTROLLER,
  partitions: [],
  backlog: undefined,
});

/** A static limit at `c`: the adaptive limiter pinned (min = max = initial). */
export const staticAt = (c: number): AdaptiveConcurrencyConfig => ({
  controller: { ...CONTROLLER, min: c, max: c, initial: c },
  partitions: [],
  backlog: undefined,
});

/** Where the steady scenarios start measuring: the first seconds are the limit finding C. */
export const MEASURE_FROM_MS = 10_000;

/** C = 20, offered 800/s (twice the capacity), 60 s; give it a `limit`. */
export const STEADY: Omit<SimulationOptions, 'limit'> = Object.freeze({
  durationMs: 60_000,
  capacity: () => 20,
  offeredPerSecond: [800],
});

/** C goes from `from` to `to` at 30 s, offered 1600/s, adaptive. */
export const capacityChange = (
  from: number,
  to: number,
  durationMs = 70_000,
): SimulationOptions => ({
  durationMs,
  capacity: (t) => (t < 30_000 ? from : to),
  offeredPerSecond: [1600],
  limit: ADAPTIVE,
});

/** Partitions `{ critical: 0.9, batch: 0.1 }`, critical 300/s + batch 500/s (together twice C = 20), 40 s. */
export const PARTITIONED: SimulationOptions = Object.freeze({
  durationMs: 40_000,
  capacity: () => 20,
  offeredPerSecond: [300, 500],
  limit: {
    controller: CONTROLLER,
    partitions: [
      { name: 'critical', share: 0.9 },
      { name: 'batch', share: 0.1 },
    ],
    backlog: undefined,
  },
});

/** A backlog `{ size: 100, timeout: 1 s }` at C = 20, 800/s, 30 s. */
export const BACKLOGGED: SimulationOptions = Object.freeze({
  ...STEADY,
  durationMs: 30_000,
  limit: { ...ADAPTIVE, backlog: { size: 100, timeoutMs: 1000 } },
});
