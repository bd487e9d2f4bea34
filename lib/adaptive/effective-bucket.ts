import type { BucketLimit } from '../algorithms/gcra.js';
// Absorbs floating-point noise such as `20 * 0.7 = 13.999999999999998`, so a
// burst that should be a whole number of tokens is not floored one short.
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';

/**
 * The bucket an adaptive limit uses at `rate` tokens/s: the burst follows the
 * rate proportionally, floored to whole tokens, and is at least 1.
 *
 * `effective burst = max(1, floor(declared.burst × rate / declared.rate))`;
 * at the declared rate the declared bucket is returned as is.
 *
 * Why proportional rather than fixed: the bucket keeps the same time horizon
 * (`burst / rate` seconds to refill, the `w` of the `RateLimit-Policy`
 * header), and when the downstream is struggling the burst it lets through
 * after a quiet spell shrinks with the rate. A fixed burst would hand a
 * recovering service the same spike that a healthy one gets.
 *
 * Caveat: with request costs above 1, choose `adaptive.min` so that the burst
 * at `min` still holds the largest cost; a smaller bucket denies such a request
 * with `cost-exceeds-burst` until the rate grows again.
 *
 * @publicApi
 */
export function effectiveBucket(declared: BucketLimit, rate: number): BucketLimit {
  if (rate === declared.rate) return declared;
  const burst = Math.max(1, Math.floor((declared.burst * rate) / declared.rate + TOKEN_EPSILON));
  return Object.freeze({ rate, burst });
}
