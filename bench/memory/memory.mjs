// Memory and pauses at a million keys, one scenario per process:
//   node --expose-gc bench/memory/memory.mjs <scenario> <keys> [calls] [evictionCalls]
//   node --expose-gc --trace-gc bench/memory/memory.mjs churn|churn-control <keys> <insertions> <chunk>
// Prints one JSON line (run.mjs parses the --trace-gc lines around it).
// BENCH_MEMORY_SLOW_CALLS=1 (churn, by hand): every call timed, those over 5 ms listed.
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

// Checks as the guard builds them (lib/store/bucket-key.ts, `bucketCheck`): the
// namespace computed once per limit, the caller identity (a client address,
// unmarked) appended per request, the key given whole and in parts.
const NAMESPACE = 'tb|default|HelloController.hello|';
/** Caller i's identity, a fresh string per call (as a request's address is): 10.x.y.z, 16M distinct. */
const identityOf = (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
/** A whole key, for the stores that only take those (the comparisons). */
const keyOf = (i) => NAMESPACE + identityOf(i);
// A bucket that stays live for a minute after one hit: 1 token per minute, burst 10.
const LIVE = { algorithm: 'token-bucket', rate: 1 / 60, burst: 10 };
const T0 = 1_700_000_000_000;

function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

/** The checks of one request of caller `i`. */
function checks(i, limit = LIVE) {
  const identity = identityOf(i);
  return [{ key: NAMESPACE + identity, namespace: NAMESPACE, identity, limit, cost: 1 }];
}

async function heapThrottler(keys) {
  const { ThrottlerStorageService } = await import('@nestjs/throttler');
  const before = heapAfterGc();
  const storage = new ThrottlerStorageService();
  for (let i = 0; i < keys; i++) await storage.increment(keyOf(i), 60_000, 1e9, 60_000, 'default');
  const after = heapAfterGc();
  const live = storage.storage.size;
  storage.onApplicationShutdown();
  return {
    bytesPerKey: (after - before) / keys,
    heapUsedMB: after / 2 ** 20,
    liveKeys: live,
    keyChars: keyOf(0).length,
  };
}

async function heapRlf(keys) {
  const { RateLimiterMemory } = await import('rate-limiter-flexible');
  const before = heapAfterGc();
  const limiter = new RateLimiterMemory({ points: 1e9, duration: 60 });
  // As a guard would call it: the caller's address (rate-limiter-flexible prefixes its keys itself).
  for (let i = 0; i < keys; i++) await limiter.consume(identityOf(i));
  const after = heapAfterGc();
  return {
    bytesPerKey: (after - before) / keys,
    heapUsedMB: after / 2 ** 20,
    liveKeys: keys,
    keyChars: identityOf(0).length,
    keepAlive: limiter,
  };
}

async function timeCalls(calls, call) {
  const gcs = [];
  const observer = new PerformanceObserver((list) =>
    gcs.push(
      ...list.getEntries().map((e) => ({ start: e.startTime, end: e.startTime + e.duration })),
    ),
  );
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
    maxUsWithoutGc: slowWithoutGc.length
      ? Math.max(...slowWithoutGc.map((s) => s.ms)) * 1000
      : undefined,
    // Process CPU time (all threads) spent during the longest-running call outside GC.
    maxCpuUsWithoutGc: slowWithoutGc.length
      ? Math.max(...slowWithoutGc.map((s) => s.cpuMs)) * 1000
      : undefined,
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
  for (let i = 0; i < keys; i++) store.consume({ checks: checks(i), now: T0 + i / 1000 });
  const after = heapAfterGc();
  if (store.size !== keys) throw new Error(`expected ${keys} live buckets, have ${store.size}`);
  // The store keeps the identity per key (the namespace once per limit).
  const heap = {
    bytesPerKey: (after - before) / keys,
    heapUsedMB: after / 2 ** 20,
    liveKeys: store.size,
    keyChars: identityOf(0).length,
  };

  const soon = T0 + 2_000; // every bucket still live (TAT = hit + 60 s)
  const update = await timeCalls(calls, (i) =>
    store.consume({ checks: checks((i * 7919) % keys), now: soon }),
  );
  update.sizeAfter = store.size;
  heapAfterGc();
  const evictionsBefore = store.evictions;
  const eviction = await timeCalls(evictionCalls, (i) =>
    store.consume({ checks: checks(keys + i), now: soon }),
  );
  eviction.evicted = store.evictions - evictionsBefore;
  eviction.sizeAfter = store.size;
  heapAfterGc();
  const later = T0 + 300_000; // every bucket full again: all sweepable
  const sizeBefore = store.size;
  const expiry = await timeCalls(calls, (i) =>
    store.consume({ checks: checks(keys + evictionCalls + i), now: later + i / 1000 }),
  );
  expiry.sizeBefore = sizeBefore;
  expiry.sizeAfter = store.size;
  heapAfterGc();
  let tat;
  const control = await timeCalls(calls, (i) => {
    const request = { checks: checks(keys + evictionCalls + calls + i), now: later + i / 1000 };
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

/**
 * Issue 14's memory target, run the way a server runs: a store at
 * `maxKeys: keys`, filled to `keys` live buckets, then `insertions` new
 * callers (each evicting an old one at the cap), one update of an existing
 * caller after each, all in macrotasks of `chunk` calls (`setImmediate`), so
 * that `monitorEventLoopDelay` and the turn times see every stall, whether a
 * call or a collection between calls.
 *
 * `withStore` false is the control: the same loop, chunks, identity and key
 * strings, check and request objects, and a GCRA decision on one number,
 * without a store (and without its heap): what this machine and V8 charge
 * the loop itself.
 *
 * Every `gc()` of this script shows in `--trace-gc` as "testing": the result
 * says how many came before the churn, so the parent can tell the churn's
 * collections from the fill's (`gcMarks`).
 */
async function churn(keys, insertions, chunk, withStore) {
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  let testingGcs = 0;
  const fullGc = () => {
    global.gc();
    testingGcs++;
    return process.memoryUsage().heapUsed;
  };
  // Live for an hour after one hit: nothing expires during the run, every new caller evicts one.
  const limit = { algorithm: 'token-bucket', rate: 1 / 3600, burst: 10 };
  fullGc();
  const before = fullGc();
  const store = withStore ? new MemoryStore({ maxKeys: keys }) : undefined;
  let tat;
  let sink = 0;
  const decide = withStore
    ? (request) => store.consume(request)
    : (request) => {
        const check = request.checks[0];
        const outcome = gcraConsume(tat, request.now, check.limit, check.cost);
        tat = outcome.tat;
        return { allowed: outcome.decision.allowed, decisions: [outcome.decision] };
      };
  /** Run `calls` calls of `call` in chunks, one chunk per macrotask; the turn times (chunk start to chunk start). */
  const inChunks = (calls, call) =>
    new Promise((resolve) => {
      const turns = [];
      let done = 0;
      let last = performance.now();
      let lastCpu = process.cpuUsage();
      // Each turn's wall time and the process's CPU time in it (all threads):
      // far below the wall time, the machine descheduled the process.
      const turn = () => {
        const at = performance.now();
        const cpu = process.cpuUsage(lastCpu);
        turns.push({ at, ms: at - last, cpuMs: (cpu.user + cpu.system) / 1000 });
        last = at;
        lastCpu = process.cpuUsage();
      };
      const step = () => {
        turn();
        const end = Math.min(calls, done + chunk);
        if (SLOW_CALLS) {
          for (; done < end; done++) {
            const t = performance.now();
            call(done);
            const ms = performance.now() - t;
            if (ms > 5) slowCalls.push({ n: done, at: t, ms });
          }
        } else for (; done < end; done++) call(done);
        if (done < calls) setImmediate(step);
        else {
          turn();
          resolve(turns);
        }
      };
      setImmediate(step);
    });
  // BENCH_MEMORY_SLOW_CALLS=1 (by hand): each call timed, those over 5 ms kept (with the gc entries they overlap).
  const SLOW_CALLS = process.env.BENCH_MEMORY_SLOW_CALLS === '1';
  const slowCalls = [];
  const gcs = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcs.push({ start: e.startTime, ms: e.duration, kind: e.detail?.kind ?? e.kind });
  });
  observer.observe({ entryTypes: ['gc'] });
  const GC_KINDS = { 1: 'minor', 2: 'major', 4: 'major', 8: 'incremental', 16: 'weakcb' };
  const STALL_MS = 50;
  /** One phase: turns, event-loop delay, the gc entries inside it, and what the stalls overlapped. */
  const phase = async (calls, call) => {
    const gcsBefore = gcs.length;
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const cpuBefore = process.cpuUsage();
    const t0 = performance.now();
    const turns = await inChunks(calls, call);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpuBefore);
    delay.disable();
    await new Promise((resolve) => setTimeout(resolve, 20)); // gc entries are delivered asynchronously
    const inPhase = gcs.slice(gcsBefore).filter((g) => g.start >= t0 && g.start <= t0 + wallMs);
    const longestGc = {};
    for (const g of inPhase) {
      const kind = GC_KINDS[g.kind] ?? String(g.kind);
      longestGc[kind] = Math.max(longestGc[kind] ?? 0, g.ms);
    }
    const sorted = turns.map((t) => t.ms).sort((a, b) => a - b);
    const stalls = turns
      .filter((t) => t.ms > STALL_MS)
      .map((t) => {
        const overlapping = inPhase.filter((g) => g.start < t.at && g.start + g.ms > t.at - t.ms);
        return {
          ms: t.ms,
          cpuMs: t.cpuMs,
          gcMs: overlapping.reduce((sum, g) => sum + g.ms, 0),
          gcKinds: [...new Set(overlapping.map((g) => GC_KINDS[g.kind] ?? String(g.kind)))].join(
            '+',
          ),
        };
      });
    return {
      calls,
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      turns: turns.length,
      turnP50Ms: sorted[Math.floor(sorted.length / 2)],
      turnP99Ms: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)],
      turnMaxMs: sorted[sorted.length - 1],
      // monitorEventLoopDelay: how late a 1 ms timer fired, in ns.
      delayMaxMs: delay.max / 1e6,
      delayP99Ms: delay.percentile(99) / 1e6,
      delayMeanMs: delay.mean / 1e6,
      stallsOver50ms: stalls.length,
      // Stalls in which the process had the CPU (all threads) for less than half the wall time: the machine, not the process.
      stallsOver50msDescheduled: stalls.filter((t) => t.cpuMs < t.ms / 2).length,
      turnsOver20ms: turns.filter((t) => t.ms > 20).length,
      stalls: stalls.sort((a, b) => b.ms - a.ms).slice(0, 10),
      gcCount: inPhase.length,
      gcTotalMs: inPhase.reduce((sum, g) => sum + g.ms, 0),
      longestGcMs: longestGc,
    };
  };

  const gcMarks = { beforeFill: testingGcs };
  const fill = await phase(keys, (i) => {
    const result = decide({ checks: checks(i, limit), now: Date.now() });
    sink += result.allowed ? 1 : 0;
  });
  gcMarks.afterFill = testingGcs;
  const filled = fullGc();
  if (store && store.size !== keys)
    throw new Error(`expected ${keys} live buckets, have ${store.size}`);
  // Insertion i is caller keys + i; after it, an update of a caller among the
  // last `keys` inserted (some of the oldest are evicted already: then the
  // update inserts it again, and the store's counters tell).
  const evictionsBefore = store?.evictions ?? 0;
  gcMarks.beforeChurn = testingGcs;
  const churned = await phase(2 * insertions, (n) => {
    const i = n >> 1;
    const caller = n & 1 ? keys + i - 1 - ((Math.imul(i, 0x9e3779b1) >>> 0) % keys) : keys + i;
    const result = decide({ checks: checks(caller, limit), now: Date.now() });
    sink += result.allowed ? 1 : 0;
  });
  gcMarks.afterChurn = testingGcs;
  const after = fullGc();
  observer.disconnect();
  const heap = {
    before: before / 2 ** 20,
    filledMB: filled / 2 ** 20,
    afterChurnMB: after / 2 ** 20,
    bytesPerKeyFilled: (filled - before) / keys,
    bytesPerKeyAfterChurn: (after - before) / keys,
    liveKeys: store?.size ?? 0,
  };
  if (store) {
    churned.evictions = store.evictions - evictionsBefore;
    churned.sizeAfter = store.size;
  }
  if (SLOW_CALLS) {
    churned.slowCalls = slowCalls.map((c) => ({
      ...c,
      gcs: gcs
        .filter((g) => g.start < c.at + c.ms && g.start + g.ms > c.at)
        .map((g) => `${GC_KINDS[g.kind] ?? g.kind} ${g.ms.toFixed(1)}`),
    }));
  }
  return {
    withStore,
    chunk,
    insertions,
    heap,
    fill,
    churn: churned,
    gcMarks,
    sink,
    keepAlive: store,
  };
}

const SCENARIOS = {
  holdup,
  churn: (keys, insertions, chunk) => churn(keys, insertions, chunk, true),
  'churn-control': (keys, insertions, chunk) => churn(keys, insertions, chunk, false),
  'heap-throttler': heapThrottler,
  'heap-rlf': heapRlf,
};

const [name, keys, calls, evictionCalls] = process.argv.slice(2);
const scenario = SCENARIOS[name];
if (!scenario)
  throw new Error(`unknown scenario ${name}; one of ${Object.keys(SCENARIOS).join(', ')}`);
const { keepAlive, ...result } = await scenario(Number(keys), Number(calls), Number(evictionCalls));
process.stdout.write(JSON.stringify({ scenario: name, keys: Number(keys), ...result }) + '\n');
void keepAlive;
process.exit(0);
