/**
 * A small deterministic generator (mulberry32) returning numbers in [0, 1):
 * pass it as `adaptive.random` so jittered runs are reproducible in tests and
 * simulations. Not for anything security-related.
 *
 * @example
 * ```ts
 * @RateLimit({ rate: 100, adaptive: { max: 200, random: seededRandom(42) } })
 * ```
 *
 * @publicApi
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
