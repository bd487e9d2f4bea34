// Memory per key and per-call pauses at a million keys (one run: these are
// sizes and worst cases, not rates, so the noise of the machine matters less;
// the max pause is still a single observation and is reported as such).
import { fileURLToPath } from 'node:url';
import { log, QUICK, round, runNodeJson, withRetry } from '../lib/util.mjs';

const SCRIPT = fileURLToPath(new URL('./memory.mjs', import.meta.url));

export const MEMORY_SETTINGS = QUICK
  ? { keys: 1_000_000, calls: 50_000, evictionCalls: 25_000, comparisonKeys: 100_000 }
  : { keys: 1_000_000, calls: 200_000, evictionCalls: 100_000, comparisonKeys: 200_000 };

const roundPauses = (p) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === 'number' ? round(v, 1) : v]));

export async function runMemory() {
  const { keys, calls, evictionCalls, comparisonKeys } = MEMORY_SETTINGS;
  const ours = await withRetry('memory holdup', () => runNodeJson(SCRIPT, ['holdup', keys, calls, evictionCalls], ['--expose-gc', '--max-old-space-size=4096']));
  log(`memory holdup: ${ours.heap.bytesPerKey.toFixed(0)} B/key at ${keys} keys; max pause update ${(ours.pauses.update.maxUs / 1000).toFixed(1)} ms, eviction ${(ours.pauses.eviction.maxUs / 1000).toFixed(1)} ms, expiry ${(ours.pauses.expiry.maxUs / 1000).toFixed(1)} ms`);
  const others = {};
  for (const scenario of ['heap-throttler', 'heap-rlf']) {
    others[scenario] = await withRetry(`memory ${scenario}`, () => runNodeJson(SCRIPT, [scenario, comparisonKeys], ['--expose-gc', '--max-old-space-size=4096']));
    log(`memory ${scenario}: ${others[scenario].bytesPerKey.toFixed(0)} B/key at ${comparisonKeys} keys`);
  }
  return {
    settings: MEMORY_SETTINGS,
    heap: [
      { store: 'holdup MemoryStore', keys, bytesPerKey: round(ours.heap.bytesPerKey, 1), heapUsedMB: round(ours.heap.heapUsedMB, 1), keyChars: ours.heap.keyChars },
      { store: '@nestjs/throttler ThrottlerStorageService', keys: comparisonKeys, bytesPerKey: round(others['heap-throttler'].bytesPerKey, 1), heapUsedMB: round(others['heap-throttler'].heapUsedMB, 1), keyChars: others['heap-throttler'].keyChars },
      { store: 'rate-limiter-flexible RateLimiterMemory', keys: comparisonKeys, bytesPerKey: round(others['heap-rlf'].bytesPerKey, 1), heapUsedMB: round(others['heap-rlf'].heapUsedMB, 1), keyChars: others['heap-rlf'].keyChars },
    ],
    pauses: Object.fromEntries(Object.entries(ours.pauses).map(([phase, p]) => [phase, roundPauses(p)])),
  };
}
