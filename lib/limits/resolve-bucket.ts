import type { BucketLimit } from '../algorithms/gcra.js';
import type { Rate } from '../interfaces/rate-limit-options.interface.js';
import { describeValue } from '../errors/option-error.js';
import { parseRate } from './parse-rate.js';
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';

/**
 * The longest horizon a bucket may have, in milliseconds: 10^14 ms, about
 * 3,169 years. The horizon is how far ahead of `now` a bucket's state can
 * reach: `burst x interval` (a cost never exceeds the burst), with
 * `interval = 1000 / rate` ms per token. Every store represents it exactly:
 * in memory a double; on Redis an expiry `now + horizon + padding` that stays
 * an exact integer below 2^53 even at the last valid clock reading
 * (8.64e15 ms, year 275760), written without an exponent. Hence also the
 * smallest rate, {@link MIN_RATE}, where one token takes the whole horizon.
 *
 * @publicApi
 */
export const MAX_HORIZON_MS = 1e14;

/** The smallest rate (tokens/s) a limit may have: one token per {@link MAX_HORIZON_MS}. */
export const MIN_RATE = 1000 / MAX_HORIZON_MS;

/**
 * The problem with a bucket whose horizon is beyond {@link MAX_HORIZON_MS},
 * or `undefined`: `[option, problem]`, the rate when one token alone is too
 * long, else the burst.
 */
export function horizonProblem(rate: number, burst: number): [option: 'rate' | 'burst', problem: string] | undefined {
  const interval = 1000 / rate;
  if (!(interval <= MAX_HORIZON_MS)) {
    return ['rate', `must be at least ${MIN_RATE} tokens per second (one token per ${MAX_HORIZON_MS} ms, about 3,169 years), got ${rate}`];
  }
  if (!(burst * interval <= MAX_HORIZON_MS)) {
    return [
      'burst',
      `x the interval between tokens (1000 / rate = ${interval} ms) must be at most ${MAX_HORIZON_MS} ms (about 3,169 years: what every store represents exactly), got ${burst * interval} ms for burst ${burst}; lower the burst or raise the rate`,
    ];
  }
  return undefined;
}

/**
 * Validate a declared rate and burst. The burst defaults to one second's
 * worth of the rate, at least 1. The bucket's horizon (burst x interval)
 * must be at most {@link MAX_HORIZON_MS}. `fail(option, problem)` must throw.
 */
export function resolveBucket(options: { readonly rate: Rate; readonly burst?: number }, fail: (option: string, problem: string) => never): BucketLimit {
  const rate = parseRate(options.rate);
  if (rate === undefined) {
    fail('rate', `must be a positive number of tokens per second or a string like '10/s' or '100/15min', got ${describeValue(options.rate)}`);
  }
  const burst = options.burst ?? Math.max(1, Math.ceil(rate - TOKEN_EPSILON));
  if (typeof burst !== 'number' || !Number.isFinite(burst) || burst < 1) {
    fail('burst', `must be a finite number >= 1, got ${describeValue(options.burst)}`);
  }
  const horizon = horizonProblem(rate, burst);
  if (horizon) fail(horizon[0], horizon[1]);
  return { rate, burst };
}
