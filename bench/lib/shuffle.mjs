// Callers in a random order, as clients arrive (issue 27): passes over the
// pool, each pass shuffled (every caller equally often, as in round-robin,
// but never in insertion order), from a seed fixed per `npm run bench` run
// (`BENCH_SEED`), so that every contender, in every process, visits the very
// same sequence. Round-robin in insertion order flatters a hash table (its
// entries are then read in the order they were allocated).

/** The seed of this run: BENCH_SEED (bench/index.mjs draws it once per run), else 27. */
export const runSeed = () => Number(process.env.BENCH_SEED ?? 27);

/** `length` indices into a pool of `size`: shuffled passes (Fisher-Yates, mulberry32 from `seed`). */
export function shuffledOrder(size, length, seed = runSeed()) {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const order = new Int32Array(length);
  const pass = Int32Array.from({ length: size }, (_, i) => i);
  for (let at = 0; at < length; at += size) {
    for (let i = size - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const swap = pass[i];
      pass[i] = pass[j];
      pass[j] = swap;
    }
    order.set(pass.subarray(0, Math.min(size, length - at)), at);
  }
  return order;
}
