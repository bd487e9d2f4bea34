import type { BucketLimit } from '../algorithms/gcra.js';
import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { describeValue } from '../errors/option-error.js';
import { parseRate } from './parse-rate.js';
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';

/**
 * Validate a declared rate and burst. The burst defaults to one second's
 * worth of the rate, at least 1. `fail(option, problem)` must throw.
 */
export function resolveBucket(options: Pick<RateLimitOptions, 'rate' | 'burst'>, fail: (option: string, problem: string) => never): BucketLimit {
  const rate = parseRate(options.rate);
  if (rate === undefined) {
    fail('rate', `must be a positive number of tokens per second or a string like '10/s' or '100/15min', got ${describeValue(options.rate)}`);
  }
  const burst = options.burst ?? Math.max(1, Math.ceil(rate - TOKEN_EPSILON));
  if (typeof burst !== 'number' || !Number.isFinite(burst) || burst < 1) {
    fail('burst', `must be a finite number >= 1, got ${describeValue(options.burst)}`);
  }
  return { rate, burst };
}
