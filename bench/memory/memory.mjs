// Memory and pauses at a million keys, one scenario per process:
//   node --expose-gc bench/memory/memory.mjs <scenario> <keys> [calls] [evictionCalls]
// Prints one JSON line.
//
// Heap per key: gc(), heapUsed, insert `keys` live buckets, gc(), heapUsed.
// The key strings are built on the fly and only the store keeps them, as when
// the guard builds `namespace + identity` per request, so they are counted.
//
// Pauses: every call timed alone (hrtime around it), with the store at
// `keys` entries (see `holdup` below for the phases).
// GC runs in the same thread, so a long call can be a collection rather than
// the store: calls over 1 ms are matched against `gc` performance entries.
import { PerformanceObserver } from 'node:perf_hooks';
import { MemoryStore } from 'nestjs-holdup';
import { gcraConsume } from 'nestjs-holdup/algorithms';

if (typeof global.gc !== 'function') throw new Error('run with --expose-gc');

const keyOf = (prefix, i) => `${prefix}|HelloController.hello|ip=10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
// A bucket that stays live for a minute after one hit: 1 token per minute, burst 10.
const LIVE = { algorithm: 'token-bucket', rate: 1 / 60, burst: 10 };
const T0 = 1_700_000_000_000;

function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

function checks(key) {
  return [{ key, limit: LIVE, cost: 1 }];
}

async function heapThrottler(keys) {
  const { ThrottlerStorageService } = await import('@nestjs/throttler');
  const before = heapAfterGc();
  const storage = new ThrottlerStorageService();
  for (let i = 0; i < keys; i++) await storage.increment(keyOf('default', i), 60_000, 1e9, 60_000, 'default');
  const after = heapAfterGc();
  const live = storage.storage.size;
  storage.onApplicationShutdown();
  return { bytesPerKey: (after - before) / keys, heapUsedMB: after / 2 ** 20, liveKeys: live, keyChars: keyOf('default', 0).length };
}

async function heapRlf(keys) {
  const { RateLimiterMemory } = await import('rate-limiter-flexible');
  const before = heapAfterGc();
  const limiter = new RateLimiterMemory({ points: 1e9, duration: 60 });
  for (let i = 0; i < keys; i++) await limiter.consume(keyOf('default', i));
  const after = heapAfterGc();
  return { bytesPerKey: (after - before) / keys, heapUsedMB: after / 2 ** 20, liveKeys: keys, keyChars: keyOf('default', 0).length, keepAlive: limiter };
}

async function timeCalls(calls, call) {
  const gcs = [];
  const observer = new PerformanceObserver((list) => gcs.push(...list.getEntries().map((e) => ({ start: e.startTime, end: e.startTime + e.duration }))));
  observer.observe({ entryTypes: ['gc'] });
  const durations = new Float64Array(calls);
  const slow = [];
  for (let i = 0; i < calls; i++) {
    // Process CPU time around the call (all threads, outside the timed span):
    // well under the wall time, the process was descheduled by the shared
    // machine; above it, other threads (V8's concurrent GC helpers) were busy
    // during the call, which the main-thread `gc` entries do not show.
    const cpuBefore = process.cpuUsage();
    const start = process.hrtime.bigint();
    call(i);
    const ns = Number(process.hrtime.bigint() - start);
    durations[i] = ns;
    if (ns > 1e6) {
      const cpu = process.cpuUsage(cpuBefore);
      slow.push({ endMs: performance.now(), ms: ns / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 });
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 50)); // let gc entries be delivered
  observer.disconnect();
  durations.sort();
  const at = (p) => durations[Math.min(calls - 1, Math.ceil((p / 100) * calls) - 1)] / 1000;
  const duringGc = (s) => gcs.some((g) => g.start <= s.endMs && g.end >= s.endMs - s.ms);
  const slowWithoutGc = slow.filter((s) => !duringGc(s));
  return {
    calls,
    p50Us: at(50),
    p99Us: at(99),
    p999Us: at(99.9),
    maxUs: durations[calls - 1] / 1000,
    callsOver1ms: slow.length,
    callsOver1msOverlappingGc: slow.length - slowWithoutGc.length,
    maxUsWithoutGc: slowWithoutGc.length ? Math.max(...slowWithoutGc.map((s) => s.ms)) * 1000 : undefined,
    // Process CPU time (all threads) spent during the longest-running call outside GC.
    maxCpuUsWithoutGc: slowWithoutGc.length ? Math.max(...slowWithoutGc.map((s) => s.cpuMs)) * 1000 : undefined,
  };
}

/**
 * MemoryStore at `keys` live buckets, phases in this order on one store (one
 * fill of a million keys is the slow part, so it is done once):
 * 1. heap per key right after the fill;
 * 2. update: `calls` admitted requests of existing callers (round-robin);
 * 3. eviction: `calls` new callers while all buckets are live at the cap;
 * 4. expiry: the clock moved past every bucket's TAT, `calls` new callers
 *    while the incremental sweep deletes the expired buckets;
 * 5. control: the same calls without the store (same key strings and
 *    request objects built, the algorithm on a number), with the store still
 *    in the heap: what this machine and V8 charge any such call, so that the
 *    store's own share of the pauses above can be told apart.
 */
async function holdup(keys, calls, evictionCalls) {
  const before = heapAfterGc();
  const store = new MemoryStore({ maxKeys: keys });
  for (let i = 0; i < keys; i++) store.consume({ checks: checks(keyOf('default', i)), now: T0 + i / 1000 });
  const after = heapAfterGc();
  if (store.size !== keys) throw new Error(`expected ${keys} live buckets, have ${store.size}`);
  const heap = { bytesPerKey: (after - before) / keys, heapUsedMB: after / 2 ** 20, liveKeys: store.size, keyChars: keyOf('default', 0).length };

  const soon = T0 + 2_000; // every bucket still live (TAT = hit + 60 s)
  const update = await timeCalls(calls, (i) => store.consume({ checks: checks(keyOf('default', (i * 7919) % keys)), now: soon }));
  update.sizeAfter = store.size;
  heapAfterGc();
  const evictionsBefore = store.evictions;
  const eviction = await timeCalls(evictionCalls, (i) => store.consume({ checks: checks(keyOf('new', i)), now: soon }));
  eviction.evicted = store.evictions - evictionsBefore;
  eviction.sizeAfter = store.size;
  heapAfterGc();
  const later = T0 + 300_000; // every bucket full again: all sweepable
  const sizeBefore = store.size;
  const expiry = await timeCalls(calls, (i) => store.consume({ checks: checks(keyOf('late', i)), now: later + i / 1000 }));
  expiry.sizeBefore = sizeBefore;
  expiry.sizeAfter = store.size;
  heapAfterGc();
  let tat;
  const control = await timeCalls(calls, (i) => {
    const request = { checks: checks(keyOf('control', i)), now: later + i / 1000 };
    const check = request.checks[0];
    const outcome = gcraConsume(tat, request.now, check.limit, check.cost);
    tat = outcome.tat;
    return { allowed: outcome.decision.allowed, decisions: [outcome.decision] };
  });
  return {
    heap,
    pauses: { update, eviction, expiry, control },
    keepAlive: store,
  };
}

const SCENARIOS = {
  holdup,
  'heap-throttler': heapThrottler,
  'heap-rlf': heapRlf,
};

const [name, keys, calls, evictionCalls] = process.argv.slice(2);
const scenario = SCENARIOS[name];
if (!scenario) throw new Error(`unknown scenario ${name}; one of ${Object.keys(SCENARIOS).join(', ')}`);
const { keepAlive, ...result } = await scenario(Number(keys), Number(calls), Number(evictionCalls));
process.stdout.write(JSON.stringify({ scenario: name, keys: Number(keys), ...result }) + "\n");
void keepAlive;
process.exit(0);
