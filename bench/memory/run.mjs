// Memory per key and per-call pauses at a million keys (one run: these are
// sizes and worst cases, not rates, so the noise of the machine matters less;
// the max pause is still a single observation and is reported as such).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, log, QUICK, round, runNodeJson, withRetry } from '../lib/util.mjs';

const SCRIPT = fileURLToPath(new URL('./memory.mjs', import.meta.url));

export const MEMORY_SETTINGS = QUICK
  ? {
      keys: 1_000_000,
      calls: 50_000,
      evictionCalls: 25_000,
      comparisonKeys: 100_000,
      churnInsertions: 1_000_000,
      churnChunk: 1000,
    }
  : {
      keys: 1_000_000,
      calls: 200_000,
      evictionCalls: 100_000,
      comparisonKeys: 200_000,
      churnInsertions: 4_000_000,
      churnChunk: 1000,
    };

/**
 * `node --trace-gc [nodeArgs] script ...args`: the JSON result line and the
 * collections V8 printed, numbered by the script's own `gc()` calls (reason
 * "testing") seen before each, so that they can be assigned to its phases.
 * V8 prints through C stdio (buffered on a pipe), so the order of its lines
 * against the script's own output is not reliable; their order among
 * themselves is.
 */
function runWithTraceGc(script, args, nodeArgs) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--trace-gc', ...nodeArgs, script, ...args.map(String)],
      { cwd: BENCH_DIR, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0)
        return reject(new Error(`${script} ${args.join(' ')} exited with ${code}\n${stderr}`));
      const lines = stdout.split('\n');
      const result = lines
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
        .pop();
      if (!result)
        return reject(new Error(`${script} ${args.join(' ')} printed no JSON result\n${stderr}`));
      const gcs = [];
      let testing = 0;
      for (const line of lines) {
        // [pid:isolate]   1234 ms: Scavenge 45.2 (60.1) -> 40.3 (61.1) MB, 3.45 / 0.00 ms  (...) allocation failure;
        const m =
          /^\[\d+:0x[0-9a-f]+\]\s+[\d.]+ ms: (Scavenge|Minor Mark-Sweep|Mark-Compact|Mark-Sweep)[^,]*, ([\d.]+) \/ ([\d.]+) ms(.*)$/.exec(
            line,
          );
        if (!m) continue;
        if (/\btesting\b/.test(m[4])) {
          testing++;
          continue;
        }
        const step = /biggest step ([\d.]+) ms/.exec(m[4]);
        gcs.push({
          kind: m[1] === 'Mark-Sweep' ? 'Mark-Compact' : m[1],
          pauseMs: Number(m[2]),
          biggestStepMs: step ? Number(step[1]) : 0,
          after: testing,
        });
      }
      resolve({ result, gcs });
    });
  });
}

/** The collections of one phase (between the script's `gc()` calls numbered `mark` and `mark + 1`), by kind. */
function gcSummary(gcs, mark) {
  const inPhase = gcs.filter((g) => g.after === mark);
  const of = (kind) => inPhase.filter((g) => g.kind === kind);
  const longest = (list, field = 'pauseMs') =>
    list.length ? round(Math.max(...list.map((g) => g[field])), 1) : 0;
  return {
    scavenges: of('Scavenge').length + of('Minor Mark-Sweep').length,
    longestScavengeMs: longest([...of('Scavenge'), ...of('Minor Mark-Sweep')]),
    markCompacts: of('Mark-Compact').length,
    longestMarkCompactMs: longest(of('Mark-Compact')),
    longestMarkingStepMs: longest(of('Mark-Compact'), 'biggestStepMs'),
    totalMs: round(
      inPhase.reduce((sum, g) => sum + g.pauseMs, 0),
      0,
    ),
  };
}

/** One churn process (the store or the control), reduced to what the report prints. */
async function runChurn(scenario, keys, insertions, chunk) {
  const { result, gcs } = await runWithTraceGc(
    SCRIPT,
    [scenario, keys, insertions, chunk],
    ['--expose-gc', '--max-old-space-size=4096'],
  );
  const c = result.churn;
  return {
    scenario,
    insertions,
    calls: c.calls,
    evictions: c.evictions,
    wallSeconds: round(c.wallMs / 1000, 1),
    cpuSeconds: round(c.cpuMs / 1000, 1),
    delayMaxMs: round(c.delayMaxMs, 1),
    delayP99Ms: round(c.delayP99Ms, 1),
    turnMaxMs: round(c.turnMaxMs, 1),
    turnP99Ms: round(c.turnP99Ms, 1),
    stallsOver50ms: c.stallsOver50ms,
    stallsOver50msDescheduled: c.stallsOver50msDescheduled,
    turnsOver20ms: c.turnsOver20ms,
    // The longest turns, with the process CPU time in them and the gc entries they overlapped.
    stalls: c.stalls.map((s) => ({
      ms: round(s.ms, 1),
      cpuMs: round(s.cpuMs, 1),
      gcMs: round(s.gcMs, 1),
      gcKinds: s.gcKinds,
    })),
    gc: gcSummary(gcs, result.gcMarks.beforeChurn),
    gcEntriesLongestMs: Object.fromEntries(
      Object.entries(c.longestGcMs).map(([kind, ms]) => [kind, round(ms, 1)]),
    ),
    fill: {
      wallSeconds: round(result.fill.wallMs / 1000, 1),
      delayMaxMs: round(result.fill.delayMaxMs, 1),
      stallsOver50ms: result.fill.stallsOver50ms,
      gc: gcSummary(gcs, result.gcMarks.beforeFill),
    },
    heap: {
      bytesPerKeyFilled: round(result.heap.bytesPerKeyFilled, 1),
      bytesPerKeyAfterChurn: round(result.heap.bytesPerKeyAfterChurn, 1),
      heapUsedMBAfterChurn: round(result.heap.afterChurnMB, 1),
      liveKeys: result.heap.liveKeys,
    },
  };
}

const roundPauses = (p) =>
  Object.fromEntries(
    Object.entries(p).map(([k, v]) => [k, typeof v === 'number' ? round(v, 1) : v]),
  );

export async function runMemory() {
  const { keys, calls, evictionCalls, comparisonKeys } = MEMORY_SETTINGS;
  const ours = await withRetry('memory holdup', () =>
    runNodeJson(
      SCRIPT,
      ['holdup', keys, calls, evictionCalls],
      ['--expose-gc', '--max-old-space-size=4096'],
    ),
  );
  log(
    `memory holdup: ${ours.heap.bytesPerKey.toFixed(0)} B/key at ${keys} keys; max pause update ${(ours.pauses.update.maxUs / 1000).toFixed(1)} ms, eviction ${(ours.pauses.eviction.maxUs / 1000).toFixed(1)} ms, expiry ${(ours.pauses.expiry.maxUs / 1000).toFixed(1)} ms`,
  );
  // Issue 14's churn target, and its control (same loop without the store), in processes of their own.
  const { churnInsertions, churnChunk } = MEMORY_SETTINGS;
  const churn = {};
  for (const scenario of ['churn-control', 'churn']) {
    churn[scenario === 'churn' ? 'store' : 'control'] = await withRetry(`memory ${scenario}`, () =>
      runChurn(scenario, keys, churnInsertions, churnChunk),
    );
    const r = churn[scenario === 'churn' ? 'store' : 'control'];
    log(
      `memory ${scenario}: ${r.insertions} insertions in ${r.wallSeconds} s; event-loop delay max ${r.delayMaxMs} ms, p99 ${r.delayP99Ms} ms; ` +
        `${r.stallsOver50ms} stalls > 50 ms; longest Scavenge ${r.gc.longestScavengeMs} ms, Mark-Compact ${r.gc.longestMarkCompactMs} ms; ${r.heap.bytesPerKeyAfterChurn} B/key`,
    );
  }
  const others = {};
  for (const scenario of ['heap-throttler', 'heap-rlf']) {
    others[scenario] = await withRetry(`memory ${scenario}`, () =>
      runNodeJson(SCRIPT, [scenario, comparisonKeys], ['--expose-gc', '--max-old-space-size=4096']),
    );
    log(
      `memory ${scenario}: ${others[scenario].bytesPerKey.toFixed(0)} B/key at ${comparisonKeys} keys`,
    );
  }
  return {
    settings: MEMORY_SETTINGS,
    heap: [
      {
        store: 'holdup MemoryStore',
        keys,
        bytesPerKey: round(ours.heap.bytesPerKey, 1),
        heapUsedMB: round(ours.heap.heapUsedMB, 1),
        keyChars: ours.heap.keyChars,
      },
      {
        store: '@nestjs/throttler ThrottlerStorageService',
        keys: comparisonKeys,
        bytesPerKey: round(others['heap-throttler'].bytesPerKey, 1),
        heapUsedMB: round(others['heap-throttler'].heapUsedMB, 1),
        keyChars: others['heap-throttler'].keyChars,
      },
      {
        store: 'rate-limiter-flexible RateLimiterMemory',
        keys: comparisonKeys,
        bytesPerKey: round(others['heap-rlf'].bytesPerKey, 1),
        heapUsedMB: round(others['heap-rlf'].heapUsedMB, 1),
        keyChars: others['heap-rlf'].keyChars,
      },
    ],
    churn,
    pauses: Object.fromEntries(
      Object.entries(ours.pauses).map(([phase, p]) => [phase, roundPauses(p)]),
    ),
  };
}
