import type { BucketLimit } from '../algorithms/gcra.js';
import type { Rate } from '../interfaces/rate-limit-options.interface.js';
import { describeValue } from '../errors/option-error.js';
import { parseRate, rateCount } from './parse-rate.js';
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';
import { MAX_HORIZON_MS } from '../store/horizon.js';

/** The smallest rate (tokens/s) a limit may have: one token per {@link MAX_HORIZON_MS}. */
export const MIN_RATE = 1000 / MAX_HORIZON_MS;

/**
 * The problem with a bucket whose horizon is beyond {@link MAX_HORIZON_MS},
 * or `undefined`: `[option, problem]`, the rate when one token alone is too
 * long, else the burst.
 */
export function horizonProblem(
  rate: number,
  burst: number,
): [option: 'rate' | 'burst', problem: string] | undefined {
  const interval = 1000 / rate;
  if (!(interval <= MAX_HORIZON_MS)) {
    return [
      'rate',
      `must be at least ${MIN_RATE} tokens per second (one token per ${MAX_HORIZON_MS} ms, about 3,169 years), got ${rate}`,
    ];
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
 * The burst a bucket gets when none is declared: for a string rate, the count
 * it is written with (`'100/min'` holds 100, `'100/15min'` 100); for a number,
 * one second's worth. At least 1, rounded up.
 */
export function defaultBurst(declared: Rate, perSecond: number): number {
  const tokens = rateCount(declared) ?? perSecond;
  return Math.max(1, Math.ceil(tokens - TOKEN_EPSILON));
}

/**
 * Validate a declared rate and burst. The burst defaults to
 * {@link defaultBurst}: a string rate's count (`'100/min'` holds 100), a
 * number's one second's worth, at least 1. The bucket's horizon (burst x
 * interval) must be at most {@link MAX_HORIZON_MS}. `fail(option, problem)`
 * must throw.
 */
export function resolveBucket(
  options: { readonly rate: Rate; readonly burst?: number },
  fail: (option: string, problem: string) => never,
): BucketLimit {
  const rate = parseRate(options.rate);
  if (rate === undefined) {
    fail(
      'rate',
      `must be a positive number of tokens per second or a string like '10/s' or '100/15min', got ${describeValue(options.rate)}`,
    );
  }
  const burst = options.burst ?? defaultBurst(options.rate, rate);
  if (typeof burst !== 'number' || !Number.isFinite(burst) || burst < 1) {
    fail('burst', `must be a finite number >= 1, got ${describeValue(options.burst)}`);
  }
  const horizon = horizonProblem(rate, burst);
  if (horizon) fail(horizon[0], horizon[1]);
  return { rate, burst };
}
