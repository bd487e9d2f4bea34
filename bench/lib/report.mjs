// Turns the results object into the stdout tables and docs/benchmarks.md.
import { TARGET_CELLS } from '../micro/run.mjs';
import { issue14Targets } from './targets.mjs';
import { markdownTable, textTable } from './util.mjs';

const REFERENCE = {
  guard: { express: 0.93, fastify: 1.0 },
  interceptor: { express: 0.83, fastify: 0.72 },
};

const fmt = (value, digits = 0) =>
  value === undefined || value === null || Number.isNaN(value)
    ? '–'
    : Number(value).toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
/** CPU ms of a pause phase's longest calls outside GC (– when none was over 1 ms). */
const cpuMs = (phase) =>
  phase.maxCpuUsWithoutGc === undefined ? '–' : fmt(phase.maxCpuUsWithoutGc / 1000, 1);
const x = (value) => (value === undefined ? '–' : `${fmt(value, 2)}×`);
/** Calls per decision: a leased hot key makes one call per thousands of decisions, which two decimals would show as 0.00. */
const calls = (value) =>
  value === undefined || value === null || Number.isNaN(value)
    ? '–'
    : value >= 0.1 || value === 0
      ? fmt(value, 2)
      : value.toLocaleString('en-US', { maximumSignificantDigits: 3 });
/** The same, with the decisions per call when that is the easier number to read. */
const perDecision = (value) =>
  value > 0 && value < 0.1 ? `${calls(value)} (1 per ${fmt(1 / value)})` : calls(value);
/** A ratio far below 1 reads better as a fraction. */
const fraction = (value) =>
  value === undefined || Number.isNaN(value)
    ? '–'
    : value >= 0.1
      ? x(value)
      : `1/${fmt(1 / value)}`;

function httpSections(http) {
  if (!http) return [];
  const sections = [];
  for (const platform of ['express', 'fastify']) {
    const rows = http.rows.filter((row) => row.platform === platform);
    sections.push({
      title: `HTTP throughput, ${platform === 'express' ? 'Express' : 'Fastify'} (Nest 12, hello-world GET)`,
      header: [
        'variant',
        'req/s (median)',
        '× baseline',
        'range of ×',
        'CPU µs/req (user + sys)',
        'CPU µs above baseline',
        '× by CPU',
        'p99 ms',
        'req/s runs',
      ],
      rows: rows.map((row) => [
        row.label,
        fmt(row.rpsMedian),
        x(row.ratio),
        row.variant === 'baseline' ? '–' : `${fmt(row.ratioMin, 2)}–${fmt(row.ratioMax, 2)}`,
        `${fmt(row.cpuMicrosPerRequestMedian, 1)} (${fmt(row.userMicrosPerRequestMedian, 1)} + ${fmt(row.systemMicrosPerRequestMedian, 1)})`,
        row.variant === 'baseline' ? '–' : fmt(row.cpuMicrosAboveBaseline, 1),
        x(row.cpuRatio),
        fmt(row.p99LatencyMsMedian),
        row.rpsRuns.map((v) => fmt(v)).join(' / '),
      ]),
    });
  }
  return sections;
}

function guardSection(guard) {
  if (!guard) return [];
  return [
    {
      title: `Guard micro-benchmark: canActivate alone, ns per request (${guard.settings.platform}; ${fmt(guard.settings.calls)} calls × ${guard.settings.repetitions}, interleaved)`,
      header: ['guard', 'ns/request (median)', 'ns above the no-op guard', 'runs'],
      rows: guard.rows.map((row) => [
        row.label +
          (row.timesOurs === undefined ? '' : ` (${x(row.timesOurs)} ours, above the floor)`),
        fmt(row.nsPerCallMedian),
        row.nsAboveNoop === undefined ? '–' : fmt(row.nsAboveNoop),
        row.nsPerCallRuns.map((v) => fmt(v)).join(' / '),
      ]),
    },
  ];
}

function guardProfileSection(guard) {
  if (!guard?.profile) return [];
  const { profile } = guard;
  return [
    {
      title: `Where RateLimitGuard.canActivate spends its time (CPU profile of the "${profile.case}" case, ${fmt(profile.calls)} calls, ${fmt(profile.samplesInCanActivate)} samples at 100 µs; inclusive shares)`,
      header: ['function', '% of canActivate'],
      rows: profile.parts.map((part) => [
        part.label.replace(/^( +)/, (spaces) => '·'.repeat(spaces.length)),
        `${fmt(part.sharePercent, 1)} %`,
      ]),
    },
  ];
}

function microSection(micro) {
  if (!micro) return [];
  return [
    {
      title: 'Decision micro-benchmark (no HTTP), ns per decision',
      header: ['case', 'iterations', 'ns/decision (median)', '× ours', 'runs'],
      rows: micro.rows.map((row) => [
        row.case === 'throttler-hot'
          ? `${row.label} (at ~10k hits: ${fmt(row.nsPerOpAtLog10kMedian)} ns)`
          : row.label,
        fmt(row.iterations),
        fmt(row.nsPerOpMedian),
        row.timesOurs === undefined ? '–' : `${x(row.timesOurs)} vs ${row.versus}`,
        row.nsPerOpRuns.map((v) => fmt(v)).join(' / '),
      ]),
    },
  ];
}

/** Issue 14's in-process targets: ≤ 3× the floor, and ≥ 1.5× faster than rate-limiter-flexible, in every cell. */
function microTargetSection(micro) {
  const m = Object.fromEntries((micro?.rows ?? []).map((r) => [r.case, r]));
  const cells = TARGET_CELLS.filter((cell) => m[`holdup-${cell}`]);
  if (cells.length === 0) return [];
  return [
    {
      title:
        "Decision targets (issues 14 and 27): MemoryStore.consume as the guard calls it, medians, ns per decision; random order: shuffled passes over the callers from the run's seed, the same order for every contender",
      header: [
        'keys, outcome',
        'floor',
        'holdup',
        'rate-limiter-flexible',
        '× floor (target ≤ 3)',
        'rlf ÷ holdup (target ≥ 1.5)',
        'met',
      ],
      rows: cells.map((cell) => {
        const floor = m[`floor-${cell}`].nsPerOpMedian;
        const ours = m[`holdup-${cell}`].nsPerOpMedian;
        const rlf = m[`rlf-${cell}`].nsPerOpMedian;
        const met = ours <= 3 * floor && rlf >= 1.5 * ours;
        return [
          cell.includes('random')
            ? cell.replace(/-random-/, ' keys, random order, ')
            : cell.replace('-', ' key(s), '),
          fmt(floor),
          fmt(ours),
          fmt(rlf),
          x(ours / floor),
          x(rlf / ours),
          met ? 'met' : 'not met',
        ];
      }),
    },
  ];
}

function memorySections(memory) {
  if (!memory) return [];
  const phaseLabel = {
    update: `update: admitted requests of existing callers`,
    eviction: `eviction: new callers at the maxKeys cap (all live)`,
    expiry: `expiry: new callers while the sweep deletes expired buckets`,
    control: `control: the same calls without the store (key, request, algorithm; store kept in the heap)`,
  };
  return [
    {
      title: 'Memory: heap per live key (node --expose-gc, gc() before and after)',
      header: ['store', 'live keys', 'bytes/key', 'heapUsed MB', 'key as given (chars)'],
      rows: memory.heap.map((row) => [
        row.store,
        fmt(row.keys),
        fmt(row.bytesPerKey),
        fmt(row.heapUsedMB),
        `${row.keyChars} chars`,
      ]),
    },
    {
      title: `MemoryStore per-call pauses at ${fmt(memory.settings.keys)} keys (one run; each call timed alone)`,
      header: [
        'phase',
        'calls',
        'p50 µs',
        'p99 µs',
        'p99.9 µs',
        'max ms',
        'calls > 1 ms',
        '… during a GC',
        'max ms outside GC',
        'process CPU ms in it (all threads)',
      ],
      rows: Object.entries(memory.pauses).map(([phase, p]) => [
        phaseLabel[phase] ?? phase,
        fmt(p.calls),
        fmt(p.p50Us, 1),
        fmt(p.p99Us, 1),
        fmt(p.p999Us, 1),
        fmt(p.maxUs / 1000, 1),
        fmt(p.callsOver1ms),
        fmt(p.callsOver1msOverlappingGc),
        p.maxUsWithoutGc === undefined ? '–' : fmt(p.maxUsWithoutGc / 1000, 1),
        p.maxCpuUsWithoutGc === undefined ? '–' : fmt(p.maxCpuUsWithoutGc / 1000, 1),
      ]),
    },
    ...churnSections(memory),
  ];
}

/** The churn run of issue 14's memory target (its verdict: bench/lib/targets.mjs). */
function churnSections(memory) {
  const churn = memory.churn;
  if (!churn?.store) return [];
  const { store, control } = churn;
  const row = (label, r) => [
    label,
    fmt(r.insertions),
    fmt(r.calls),
    fmt(r.wallSeconds, 1),
    fmt(r.delayMaxMs, 1),
    fmt(r.delayP99Ms, 1),
    fmt(r.stallsOver50ms),
    `${fmt(r.gc.longestScavengeMs, 1)} (${fmt(r.gc.scavenges)})`,
    `${fmt(r.gc.longestMarkCompactMs, 1)} (${fmt(r.gc.markCompacts)})`,
    r.heap.liveKeys
      ? `${fmt(r.heap.bytesPerKeyFilled)} / ${fmt(r.heap.bytesPerKeyAfterChurn)}`
      : '–',
  ];
  return [
    {
      title:
        `MemoryStore at ${fmt(memory.settings.keys)} keys under churn (issue 14): new callers evicting old ones, one update of an existing caller after each, ` +
        `${fmt(memory.settings.churnChunk)} calls per macrotask (setImmediate); node --trace-gc, monitorEventLoopDelay (1 ms resolution); one run`,
      header: [
        'process',
        'insertions',
        'calls',
        'wall s',
        'event-loop delay max ms',
        'p99 ms',
        'stalls > 50 ms',
        'longest Scavenge ms (count)',
        'longest Mark-Compact ms (count)',
        'heap B/key filled / after churn',
      ],
      rows: [
        row('MemoryStore (maxKeys 1M, filled, then churned)', store),
        ...(control ? [row('control: the same loop, strings and objects, no store', control)] : []),
      ],
    },
  ];
}

/** The churn run's stalls in words: each with the process CPU time in it and the collections it overlapped. */
function churnObservation(churn) {
  if (!churn?.store) return undefined;
  const { store, control } = churn;
  const stalls = store.stalls.length
    ? store.stalls
        .slice(0, 5)
        .map(
          (s) =>
            `${fmt(s.ms, 1)} ms (process CPU ${fmt(s.cpuMs, 1)} ms${s.gcKinds ? `, over a ${s.gcKinds} GC of ${fmt(s.gcMs, 1)} ms` : ', no GC'})`,
        )
        .join(', ')
    : 'none';
  return (
    `Churn (issue 14): ${fmt(store.insertions)} new callers at the 1M-key cap (${fmt(store.evictions)} evictions) in ${fmt(store.wallSeconds, 1)} s; ` +
    `event-loop delay max ${fmt(store.delayMaxMs, 1)} ms, p99 ${fmt(store.delayP99Ms, 1)} ms; longest macrotask ${fmt(store.turnMaxMs, 1)} ms, ${fmt(store.turnsOver20ms)} over 20 ms; ` +
    `stalls over 50 ms: ${stalls}. Process CPU well below a stall's wall time means the shared machine descheduled the process. ` +
    `Longest GC pauses (--trace-gc): Scavenge ${fmt(store.gc.longestScavengeMs, 1)} ms, Mark-Compact ${fmt(store.gc.longestMarkCompactMs, 1)} ms (largest incremental marking step ${fmt(store.gc.longestMarkingStepMs, 1)} ms), ${fmt(store.gc.totalMs)} ms in all. ` +
    (control
      ? `Control (same loop, no store): delay max ${fmt(control.delayMaxMs, 1)} ms, p99 ${fmt(control.delayP99Ms, 1)} ms, ${fmt(control.stallsOver50ms)} stalls over 50 ms, longest Scavenge ${fmt(control.gc.longestScavengeMs, 1)} ms, ${fmt(control.wallSeconds, 1)} s. `
      : '') +
    `Heap per key ${fmt(store.heap.bytesPerKeyFilled)} B filled, ${fmt(store.heap.bytesPerKeyAfterChurn)} B after the churn (gc() before and after; identities of 8-11 characters, 10.x.y.z, kept by the store).`
  );
}

function redisSections(redis) {
  if (!redis) return [];
  if (redis.skipped) return [{ title: 'Redis', header: ['skipped'], rows: [[redis.skipped]] }];
  const commands = (perDecision) =>
    Object.entries(perDecision)
      .sort((a, b) => b[1] - a[1])
      .map(([cmd, n]) => `${cmd.toUpperCase()} ${fmt(n, 2)}`)
      .join(', ');
  return [
    {
      title: `Redis ${redis.settings.redisVersion}: decisions/s, ${redis.settings.inFlight} in flight, ${fmt(redis.settings.keys)} keys, same ioredis client`,
      header: [
        'store',
        'decisions/s (median)',
        '× ours',
        'Node CPU µs/decision',
        'Redis CPU µs/decision',
        'runs',
      ],
      rows: redis.rows.map((row) => [
        row.store,
        fmt(row.decisionsPerSecondMedian),
        x(row.ratioToOurs),
        fmt(row.nodeCpuMicrosPerDecisionMedian, 1),
        fmt(row.redisCpuMicrosPerDecisionMedian, 1),
        row.decisionsPerSecondRuns.map((v) => fmt(v)).join(' / '),
      ]),
    },
    {
      title:
        'Redis commands per decision (INFO commandstats; commands run inside a script are counted too)',
      header: [
        'store',
        'commands per decision',
        'µs in the script call per decision (commandstats usec)',
      ],
      rows: redis.rows.map((row) => [
        row.store,
        commands(row.commandsPerDecision),
        fmt(row.scriptMicrosPerDecision, 2),
      ]),
    },
    ...redisLoadsSection(redis),
    ...twoTierSections(redis),
  ];
}

function twoTierSections(redis) {
  const twoTier = redis.twoTier;
  if (!twoTier) return [];
  if (twoTier.skipped)
    return [
      { title: 'TwoTierStore vs RedisStore', header: ['skipped'], rows: [[twoTier.skipped]] },
    ];
  const { hotKeys, openLimit, saturatedLimit } = twoTier.settings;
  const limit = ({ rate, burst }) => `${fmt(rate)}/s, burst ${fmt(burst)}`;
  // Each run is a fresh store, closed at its end: the table says so, since it is why short runs show more calls than a steady state would.
  const perRun = `${redis.settings.inFlight} in flight, ${fmt(redis.settings.decisions)} decisions per run on a fresh store closed at its end (leases ramping up and given back included)`;
  const throughputTable = (title, rows) => ({
    title,
    header: [
      'store',
      'decisions/s (median)',
      '× RedisStore',
      'Node CPU µs/decision',
      'Redis CPU µs/decision',
      'script calls/decision (server)',
      'Redis calls/decision (store)',
      'leases taken',
      'runs',
    ],
    rows: rows.map((row) => [
      row.store,
      fmt(row.decisionsPerSecondMedian),
      x(row.ratioToRedisStore),
      fmt(row.nodeCpuMicrosPerDecisionMedian, 1),
      fmt(row.redisCpuMicrosPerDecisionMedian, 1),
      perDecision(row.serverScriptCallsPerDecisionMedian),
      perDecision(row.storeCallsPerDecisionMedian),
      row.leasesTakenMedian === undefined ? '–' : fmt(row.leasesTakenMedian),
      row.decisionsPerSecondRuns.map((v) => fmt(v)).join(' / '),
    ]),
  });
  return [
    throughputTable(
      `TwoTierStore vs RedisStore, ${hotKeys} hot keys (limit ${limit(openLimit)}, never reached), ${perRun}`,
      twoTier.hot,
    ),
    throughputTable(
      `TwoTierStore vs RedisStore, cold keys: every decision a key never seen before (limit ${limit(openLimit)}), ${perRun}`,
      twoTier.cold,
    ),
    {
      title: `TwoTierStore vs RedisStore, one saturated key (limit ${limit(saturatedLimit)}, offered as fast as the store answers), ${fmt(redis.settings.decisions)} decisions per run, medians`,
      header: [
        'store',
        'admitted',
        'at most (burst + rate × run time)',
        'script calls/decision (server)',
        'Redis calls/decision (store)',
        'deny-cache hits',
        'decisions/s',
      ],
      rows: twoTier.saturated.map((row) => [
        row.store,
        fmt(row.admittedMedian),
        fmt(row.limitOverRunMedian),
        perDecision(row.serverScriptCallsPerDecisionMedian),
        perDecision(row.storeCallsPerDecisionMedian),
        row.denyCacheHitsMedian === undefined ? '–' : fmt(row.denyCacheHitsMedian),
        fmt(row.decisionsPerSecondMedian),
      ]),
    },
  ];
}

function targetsSection(results) {
  return [
    {
      title: 'Issue 14 and 27 targets: measured / target / met (figures from the sections below)',
      header: ['target', 'measured', 'met'],
      rows: issue14Targets(results),
    },
  ];
}

/**
 * The Redis section's loads, as run (bench/redis/run.mjs): the main run's
 * decisions in flight (its tables and the two-tier comparison), then the
 * other load settings of the by-load table.
 */
function redisLoadsText(redis) {
  const main = redis?.settings?.inFlight;
  if (main === undefined) return 'decisions in flight as set by `bench/redis/run.mjs`';
  const others = [...new Set((redis.loads ?? []).map((load) => load.inFlight))];
  const all = others.length ? others.join(' and ') : String(main);
  return (
    `${main} decisions in flight for the main tables and the two-tier comparison, ` +
    `${all} in flight (plain client, then ioredis' \`enableAutoPipelining\`) for the by-load table`
  );
}

function redisLoadsSection(redis) {
  if (!redis?.loads) return [];
  return [
    {
      title: `Redis by load: decisions/s, medians of ${redis.settings.repetitions} interleaved runs per load, ${fmt(redis.settings.keys)} keys, one ioredis client (plain, or with enableAutoPipelining); redis-server pinned to ${redis.loads[0]?.redisPinnedTo ?? 'no core (not recorded)'}`,
      header: [
        'in flight',
        'client',
        'RedisStore',
        'rate-limiter-flexible',
        'EVALSHA floor',
        'ours ÷ rlf',
        'ours ÷ floor',
        'Redis CPU µs/decision, ours / rlf',
        'p50 / p99 µs: ours, ours uncorked, rlf, floor (c=1)',
      ],
      rows: redis.loads.map((load) => [
        fmt(load.inFlight),
        load.autoPipelining ? 'auto-pipelining' : 'plain',
        fmt(load.ours),
        fmt(load.rlf),
        fmt(load.floor),
        x(load.ours / load.rlf),
        x(load.ours / load.floor),
        `${fmt(load.oursRedisCpu, 1)} / ${fmt(load.rlfRedisCpu, 1)}`,
        load.latency
          ? ['holdup', 'holdupUncorked', 'rlf', 'floor']
              .map((who) => load.latency[who])
              .map((l) => (l ? `${fmt(l.p50Micros, 0)} / ${fmt(l.p99Micros, 0)}` : '–'))
              .join(', ')
          : '–',
      ]),
    },
  ];
}

/**
 * Issue 27: where the time goes for the targets this code does not meet,
 * from profiles taken by hand beside the bench (each with its command).
 */
function issue27Notes(results) {
  const ns = (id) => results.guard?.rows.find((row) => row.case === id)?.nsPerCallMedian;
  const randomRatio = ns('holdup-random') / ns('floor-random');
  const orders =
    ns('floor') === undefined
      ? []
      : [
          `- Guard, round-robin against random order (this run): the floor guard takes ${fmt(ns('floor'))} ns visiting its 100k clients in the order they were inserted and ${fmt(ns('floor-random'))} ns in a random order; ours ${fmt(ns('holdup'))} and ${fmt(ns('holdup-random'))} ns. ` +
            "A `Map` keeps its entries in insertion order, so the floor's round-robin reads them one after the other in memory; ours spreads callers over shards by hash (what keeps rehashes short at 1M keys), so every order is a random one for it. " +
            `The profile below (\`BucketShard.slotOf\`: the cache misses of finding the caller) is where the difference sits; with the callers in a random order, as they arrive, ours is ${randomRatio.toFixed(2)}× the floor (target 2×: ${randomRatio <= 2 ? 'met' : 'not met in this run'}).`,
        ];
  return [
    '## Issue 27: where the remaining time goes (profiles by hand, with their commands)',
    '',
    ...orders,
    ...inFlightNotes(results),
    "- Guard, admitted, 100k clients (target ≤ 2× the floor guard): `cd bench && node --input-type=module -e \"import { profileGuard } from './guard/profile.mjs'; console.log(await profileGuard(300000, 'holdup'))\"`, twice, after header names went lowercase (2026-11-29), inclusive samples as a share of `canActivate`: " +
      "`MemoryStore.consume` 42.6-52.3 % (of which `BucketShard.slotOf`, the `Map` lookup of the caller's slot, 22.4-24.6 %: cache misses on the caller's entry, which the floor's single `Map.get` pays too; `insert` 12.5-14.4 %, new buckets: the profiled process starts with none of the 100k clients held, and its untimed warm-up visits only half of them; the incremental sweep 1.9-2.4 %), " +
      'the key (`byAddress`: the client address checked and made canonical, where the floor reads `req.ip`) 8.1-8.2 %, the headers 7.5-11.7 % (two `setHeader` calls 4.3-4.4 %: the floor writes one; before the names went lowercase, 10.5 % and 9.7 %), `Date.now` 5.7-5.9 %. ' +
      "What is left above the floor is the store's own bookkeeping that the floor does not have (a sweep step every 8th decision, the shard's hash, the typed-array slot: what bounds memory and keeps pauses short at 1M keys), the address check and the second header; the guard's own code is under 1 %.",
    "- Guard, denied: capturing a stack trace for the 429 was 36 % of a denial's samples (`BENCH_GUARD_ONLY=holdup-denied node --cpu-prof bench/guard/guard.mjs 100000 3`, `HttpException` constructor); the exception is now made without one (`HttpTransport.denialError`). " +
      "What remains is the `throw` itself (V8 unwinding from the guard's frames, ~25 % of the samples; the floor guard throws too) and the headers (`answerDenied`, ~15 %).",
    "- Redis, one request at a time (target ≥ rate-limiter-flexible's decisions/s and p99): the difference is inside Redis. `INFO commandstats` after 33,000 calls at c=1 (a scratch script calling `store.consume` / `limiter.consume` in a loop against `taskset -c 1 redis-server`): " +
      "our `consume_one` script 12.2 µs per call (GET 0.70, TIME 0.22, SET 1.07 inside it), rate-limiter-flexible's 6.8 µs (INCRBY 0.30, PTTL 0.19, SET 1.07); Node CPU per decision 39-42 µs against 35-37 µs. " +
      'A script with the same three commands and none of the arithmetic costs 8.9 µs (`redis-benchmark -c 1 -n 20000 evalsha <sha> 1 k:__rand_int__ ...`, ours 13.6 µs in the same session): ' +
      "Redis TIME (server time, the default: clocks of the fleet need not agree) and the exact `<base>:<offset>` encoding of the TAT (`string.format('%.17g')`, parsing) are what a decision costs beyond a counter. " +
      'The corked sender no longer holds a lone call (it corks only behind a command awaiting its reply), so at c=1 ours and `holdup-uncorked` send the same way. ' +
      "`node bench/redis/lua-costs.mjs 20000 3` breaks the script down by Redis's own measure (usec_per_call of loops of 1000 inside a script, ns per piece; load average 12-20 on the machine): " +
      "the stored value's `string.format('%.17g:%.17g')` 569 ns, the PXAT time's `'%.0f'` 311, a reply fraction's `'%.17g'` 275, reading `<base>:<offset>` 401, `tonumber` of the three ARGV 249, TIME with the frame and now 903, GET 312, SET ... PXAT 916, the GCRA arithmetic itself 130: " +
      "about 2 µs of text in and out for an exact TAT, 2.1 µs for the three commands, against rate-limiter-flexible's counter, which needs neither (its INCRBY and PTTL take and give integers). " +
      'Handing SET the expiry as a Lua number instead of text is slower (1,277 ns: Redis formats it itself); a binary TAT (`struct.pack`) would be cheaper but unreadable to a process of an earlier version sharing the keys during a rolling deploy, and binary replies need a Buffer client.',
    '',
  ];
}

/**
 * Issue 27, Redis at 16 in flight: how busy the pinned Redis core was for
 * ours and for rate-limiter-flexible (decisions/s x Redis CPU per decision),
 * and what the script itself takes per decision (commandstats), from this run.
 */
function inFlightNotes(results) {
  const load = results.redis?.loads?.find((row) => row.inFlight === 16 && !row.autoPipelining);
  const rows = results.redis?.rows ?? [];
  const scriptOf = (prefix) => rows.find((row) => row.store.startsWith(prefix));
  const ours = scriptOf('holdup RedisStore');
  const theirs = scriptOf('rate-limiter-flexible');
  const floor = scriptOf('EVALSHA floor');
  if (!load || !ours || !theirs || !floor) return [];
  const busy = (perSecond, micros) => `${Math.round((perSecond * micros) / 1e4)} %`;
  const speed = load.ours / load.rlf;
  const cost = load.rlfRedisCpu / load.oursRedisCpu;
  // Within 5 %: Redis's time per decision is what sets the pace; else the run says it is not.
  const follows = Math.abs(speed - cost) <= 0.05 * cost;
  return [
    `- Redis, 16 in flight (targets ≥ 1.2× rate-limiter-flexible's decisions/s, ≥ 0.8× the EVALSHA floor, Redis CPU per decision ≤ theirs), this run: the Redis core was busy ${busy(load.ours, load.oursRedisCpu)} of the time on ours (${fmt(load.ours)} decisions/s × ${load.oursRedisCpu} µs) and ${busy(load.rlf, load.rlfRedisCpu)} on rate-limiter-flexible's (${fmt(load.rlf)} × ${load.rlfRedisCpu} µs), ` +
      `and the decisions per second are ${follows ? '' : 'not '}in the ratio of the Redis CPU per decision: ours ${speed.toFixed(2)}× theirs, their CPU per decision ${cost.toFixed(2)}× ours. ` +
      `Inside the script calls (commandstats), ours takes ${ours.scriptMicrosPerDecision} µs per decision and theirs ${theirs.scriptMicrosPerDecision}: Redis TIME and the exact TAT as text, as at c=1 below, where a counter needs neither. ` +
      `The rest of Redis's time is the connection: the EVALSHA floor (a script that returns 1) costs ${floor.redisCpuMicrosPerDecisionMedian} µs of Redis CPU per call on this machine, ${floor.scriptMicrosPerDecision} of them in the script.`,
  ];
}

function allSections(results) {
  return [
    ...targetsSection(results),
    ...httpSections(results.http),
    ...guardSection(results.guard),
    ...guardProfileSection(results.guard),
    ...microSection(results.micro),
    ...microTargetSection(results.micro),
    ...memorySections(results.memory),
    ...redisSections(results.redis),
  ];
}

function observations(results) {
  const notes = [];
  const http = results.http;
  if (http) {
    const row = (platform, variant) =>
      http.rows.find((r) => r.platform === platform && r.variant === variant);
    for (const platform of ['express', 'fastify']) {
      const base = row(platform, 'baseline');
      const guard = row(platform, 'holdup');
      const bare = row(platform, 'holdup-noheaders');
      const adaptive = row(platform, 'holdup-adaptive');
      const throttler = row(platform, 'throttler');
      const noopGuard = row(platform, 'noop-guard');
      const noopInterceptor = row(platform, 'noop-interceptor');
      const delta = (r) => fmt(r.cpuMicrosAboveBaseline, 1);
      const noisy = [guard, bare, adaptive, throttler, noopGuard, noopInterceptor].filter(
        (r) => r.ratioMax - r.ratioMin > 0.3,
      );
      notes.push(
        `${platform} (baseline ${fmt(base.rpsMedian)} req/s, ${fmt(base.cpuMicrosPerRequestMedian, 1)} µs CPU/request): ` +
          `holdup guard ${x(guard.ratio)} req/s, ${x(guard.cpuRatio)} by CPU (issue reference for a guard: ${x(REFERENCE.guard[platform])}); ` +
          `headers: false ${x(bare.ratio)} / ${x(bare.cpuRatio)}; adaptive route (guard + RateLimitInterceptor) ${x(adaptive.ratio)} / ${x(adaptive.cpuRatio)}; ` +
          `@nestjs/throttler ${x(throttler.ratio)} / ${x(throttler.cpuRatio)}. ` +
          `Calibration on this machine: a no-op global guard ${x(noopGuard.ratio)} / ${x(noopGuard.cpuRatio)}, a no-op global interceptor ${x(noopInterceptor.ratio)} / ${x(noopInterceptor.cpuRatio)} ` +
          `(issue reference for a global interceptor: ${x(REFERENCE.interceptor[platform])}). ` +
          `CPU µs per request above the baseline: holdup ${delta(guard)}, headers: false ${delta(bare)}, adaptive ${delta(adaptive)}, throttler ${delta(throttler)}, no-op guard ${delta(noopGuard)}, no-op interceptor ${delta(noopInterceptor)}.` +
          (noisy.length
            ? ` Noise warning: the per-repetition ratios of ${noisy.map((r) => `${r.variant} (${fmt(r.ratioMin, 2)}–${fmt(r.ratioMax, 2)})`).join(', ')} spread over more than 0.3, ` +
              "so their medians cannot tell apart variants a few µs per request apart; see the guard micro-benchmark for the guard's own cost."
            : ''),
      );
    }
  }
  const guard = results.guard;
  if (guard) {
    const g = Object.fromEntries(guard.rows.map((r) => [r.case, r]));
    const fastifyBase = http?.rows.find(
      (r) => r.platform === 'fastify' && r.variant === 'baseline',
    );
    notes.push(
      `Guard alone: holdup's canActivate takes ${fmt(g.holdup.nsPerCallMedian)} ns per request (${fmt(g.holdup.nsAboveNoop)} ns above a no-op guard; ` +
        `${fmt(g['holdup-noheaders'].nsAboveNoop)} ns without headers, ${fmt(g['holdup-hot'].nsAboveNoop)} ns for one hot client, ${fmt(g['holdup-adaptive'].nsAboveNoop)} ns on an adaptive route), ` +
        `@nestjs/throttler's ${fmt(g.throttler.nsPerCallMedian)} ns (${x(g.throttler.timesOurs)} ours above the floor).` +
        (g.floor
          ? ` Target (issue 14): at most 2× a guard running a hand-written bucket and writing one header: measured ${x(g.holdup.nsPerCallMedian / g.floor.nsPerCallMedian)} (${fmt(g.floor.nsPerCallMedian)} ns), ${g.holdup.nsPerCallMedian <= 2 * g.floor.nsPerCallMedian ? 'met' : 'not met'}.`
          : '') +
        (g['holdup-otel']
          ? ` Metrics (issue 13 target: at most +10 % of the guard's own cost): OpenTelemetry ${fmt(100 * g['holdup-otel'].metricsOverhead, 1)} %, prom-client ${fmt(100 * g['holdup-prom'].metricsOverhead, 1)} %, ${Math.max(g['holdup-otel'].metricsOverhead, g['holdup-prom'].metricsOverhead) <= 0.1 ? 'met' : 'not met'}.`
          : '') +
        (fastifyBase
          ? ` Against the ${fmt(fastifyBase.cpuMicrosPerRequestMedian, 1)} µs of CPU a Fastify hello-world request costs here, our guard's own work is ` +
            `${fmt((100 * g.holdup.nsAboveNoop) / 1000 / fastifyBase.cpuMicrosPerRequestMedian, 1)} % of a request, i.e. an expected ratio of about ` +
            `${x(fastifyBase.cpuMicrosPerRequestMedian / (fastifyBase.cpuMicrosPerRequestMedian + g.holdup.nsAboveNoop / 1000))} before Nest's own cost of having a guard at all.`
          : ''),
    );
  }
  const micro = results.micro;
  if (micro) {
    const m = Object.fromEntries(micro.rows.map((r) => [r.case, r]));
    notes.push(
      `Decisions: MemoryStore.consume costs ${fmt(m['holdup-hot'].nsPerOpMedian)} ns on a hot key and ${fmt(m['holdup-100k'].nsPerOpMedian)} ns over 100k keys ` +
        `(Date.now() alone: ${fmt(m['date-now'].nsPerOpMedian)} ns; gcraConsume with its Date.now() ${fmt(m['gcra-raw'].nsPerOpMedian)} ns, ` +
        `so the store's own bookkeeping around the algorithm is ${fmt(m['holdup-hot'].nsPerOpMedian - m['gcra-raw'].nsPerOpMedian)} ns on a hot key). ` +
        `@nestjs/throttler's storage: ${x(m['throttler-100k'].timesOurs)} ours over 100k keys, ${x(m['throttler-hot'].timesOurs)} on a hot key with ~1k hits in its log ` +
        `(${fmt(m['throttler-hot'].nsPerOpAtLog10kMedian)} ns at ~10k: a sliding log, O(hits in the window) per call). ` +
        `rate-limiter-flexible: ${x(m['rlf-hot'].timesOurs)} (hot) and ${x(m['rlf-100k'].timesOurs)} (100k keys). The two others answer with promises; ours synchronously.`,
    );
  }
  const memory = results.memory;
  if (memory) {
    const [ours, throttler, rlf] = memory.heap;
    const p = memory.pauses;
    notes.push(
      `Memory: ${fmt(ours.bytesPerKey)} bytes per live key in MemoryStore at ${fmt(ours.keys)} keys (the caller identity of ${ours.keyChars} characters kept per key, the limit's namespace once), ` +
        `vs ${fmt(throttler.bytesPerKey)} (@nestjs/throttler) and ${fmt(rlf.bytesPerKey)} (rate-limiter-flexible) at ${fmt(throttler.keys)} keys. ` +
        `Longest single call: ${fmt(p.update.maxUs / 1000, 1)} ms (update), ${fmt(p.eviction.maxUs / 1000, 1)} ms (eviction), ${fmt(p.expiry.maxUs / 1000, 1)} ms (expiry) of wall time; ` +
        `process CPU time (all threads) during the longest calls outside a GC pause: ${cpuMs(p.update)} / ${cpuMs(p.eviction)} / ${cpuMs(p.expiry)} ms (more than the wall time: V8's concurrent GC threads were at work during the call; much less: the machine descheduled the process); ` +
        `p99 ${fmt(p.update.p99Us, 1)} / ${fmt(p.eviction.p99Us, 1)} / ${fmt(p.expiry.p99Us, 1)} µs.` +
        (p.control
          ? ` Control, the same calls without the store: longest ${fmt(p.control.maxUs / 1000, 1)} ms, ${fmt(p.control.callsOver1ms)} calls over 1 ms, p99 ${fmt(p.control.p99Us, 1)} µs (what the machine and V8 charge any call).`
          : ''),
    );
    const churnNote = churnObservation(memory.churn);
    if (churnNote) notes.push(churnNote);
  }
  const redis = results.redis;
  if (redis && !redis.skipped) {
    const [ours, rlf] = redis.rows;
    notes.push(
      `Redis: RedisStore ${fmt(ours.decisionsPerSecondMedian)} decisions/s, rate-limiter-flexible ${fmt(rlf.decisionsPerSecondMedian)} (${x(rlf.ratioToOurs)} ours); ` +
        `Redis CPU per decision ${fmt(ours.redisCpuMicrosPerDecisionMedian, 1)} vs ${fmt(rlf.redisCpuMicrosPerDecisionMedian, 1)} µs; ` +
        `EVALSHA per decision: ${fmt(ours.commandsPerDecision.evalsha ?? 0, 2)} (ours), ${fmt(rlf.commandsPerDecision.evalsha ?? 0, 2)} (rate-limiter-flexible).`,
    );
    const twoTierNote = twoTierObservation(redis.twoTier);
    if (twoTierNote) notes.push(twoTierNote);
  }
  return notes;
}

function twoTierObservation(twoTier) {
  if (!twoTier || twoTier.skipped) return undefined;
  const [redisHot, hot] = twoTier.hot;
  const [redisCold, cold] = twoTier.cold;
  const [redisSaturated, saturated] = twoTier.saturated;
  const failures = [...twoTier.hot, ...twoTier.cold, ...twoTier.saturated].reduce(
    (sum, row) => sum + row.timeouts + row.errors + row.fallbacks,
    0,
  );
  return (
    `TwoTierStore on ${twoTier.settings.hotKeys} hot keys: ${perDecision(hot.storeCallsPerDecisionMedian)} Redis calls per decision ` +
    `(server count ${calls(hot.serverScriptCallsPerDecisionMedian)}) against ${calls(redisHot.storeCallsPerDecisionMedian)} for RedisStore, ` +
    `i.e. ${fraction(hot.callsRatioToRedisStore)} of RedisStore's calls; ${fmt(hot.decisionsPerSecondMedian)} decisions/s (${x(hot.ratioToRedisStore)} RedisStore's), ` +
    `Redis CPU ${fmt(hot.redisCpuMicrosPerDecisionMedian, 2)} vs ${fmt(redisHot.redisCpuMicrosPerDecisionMedian, 1)} µs and Node CPU ${fmt(hot.nodeCpuMicrosPerDecisionMedian, 1)} vs ${fmt(redisHot.nodeCpuMicrosPerDecisionMedian, 1)} µs per decision. ` +
    `Cold keys: ${calls(cold.storeCallsPerDecisionMedian)} Redis call per decision (server count ${calls(cold.serverScriptCallsPerDecisionMedian)}; RedisStore ${calls(redisCold.storeCallsPerDecisionMedian)}), ` +
    `throughput ${x(cold.ratioToRedisStore)} RedisStore's, Node CPU ${fmt(cold.nodeCpuMicrosPerDecisionMedian, 1)} vs ${fmt(redisCold.nodeCpuMicrosPerDecisionMedian, 1)} µs per decision. ` +
    `Saturated key: ${fmt(saturated.admittedMedian)} admitted (at most ${fmt(saturated.limitOverRunMedian)}) with ${perDecision(saturated.storeCallsPerDecisionMedian)} Redis calls per decision ` +
    `and ${fmt(saturated.denyCacheHitsMedian)} deny-cache hits, against ${fmt(redisSaturated.admittedMedian)} (at most ${fmt(redisSaturated.limitOverRunMedian)}) and ${calls(redisSaturated.storeCallsPerDecisionMedian)} for RedisStore.` +
    (failures ? ` Redis timeouts, errors or fallbacks during these runs: ${fmt(failures)}.` : '')
  );
}

export function textReport(results) {
  const out = [
    `nestjs-holdup benchmarks — ${results.command} — ${results.date}`,
    `source: ${results.source?.commit}${results.source?.uncommittedInLibOrAdapters?.length ? ` + uncommitted: ${results.source.uncommittedInLibOrAdapters.join(', ')}` : ''}` +
      (results.source?.changedDuringRun
        ? ` (CHANGED during the run: ${results.source.changedDuringRun.commit} ${results.source.changedDuringRun.uncommittedInLibOrAdapters.join(', ')})`
        : ''),
    `machine: ${results.machine.nproc} CPUs (${results.machine.cpu}), node ${results.machine.node}, load average ${results.machine.loadAverageAtStart.join(' ')} at start, ${(results.machine.loadAverageAtEnd ?? []).join(' ')} at end; ${results.durationSeconds} s`,
    '',
  ];
  for (const section of allSections(results))
    out.push(section.title, textTable(section.header, section.rows), '');
  for (const note of observations(results)) out.push(`* ${note}`);
  return out.join('\n');
}

/** The time each section took (issue 27: the whole bench under 10 minutes), when the run recorded it. */
function sectionTimes(results) {
  const seconds = results.sectionSeconds;
  if (!seconds || Object.keys(seconds).length === 0) return '';
  const parts = Object.entries(seconds).map(([name, s]) => `${name} ${s} s`);
  return ` (${parts.join(', ')})`;
}

export function markdownReport(results) {
  const m = results.machine;
  const v = results.versions;
  const lines = [
    '# Benchmarks',
    '',
    `Every figure on this page comes from one run of \`${results.command}\` on ${results.date.slice(0, 10)} ` +
      `(${results.date}), ${results.durationSeconds} s${sectionTimes(results)}; the raw numbers are in [\`bench/results/latest.json\`](../bench/results/latest.json). ` +
      'The page is written by that command: rerun it rather than editing the tables.',
    '',
    '## Machine and versions',
    '',
    `- Source: commit \`${results.source?.commit}\`` +
      (results.source?.uncommittedInLibOrAdapters?.length
        ? `, with uncommitted changes in ${results.source.uncommittedInLibOrAdapters.map((line) => `\`${line}\``).join(', ')}.`
        : ', no uncommitted change in `lib/` or `adapters/`.') +
      (results.source?.changedDuringRun
        ? ` **The source changed during the run** (other work on the same checkout; at the end: commit \`${results.source.changedDuringRun.commit}\`` +
          `${results.source.changedDuringRun.uncommittedInLibOrAdapters.length ? `, uncommitted ${results.source.changedDuringRun.uncommittedInLibOrAdapters.join(', ')}` : ''}); ` +
          'sections run after a rebuild of `dist/` may have measured the newer code.'
        : ''),
    `- ${m.nproc} CPUs (\`nproc\`), ${m.cpu}, ${m.memoryGB} GB, ${m.os}; Node ${m.node}.`,
    `- Load average (1, 5, 15 min) ${m.loadAverageAtStart.join(', ')} at the start and ${(m.loadAverageAtEnd ?? []).join(', ')} at the end: ` +
      'a shared machine where other jobs (test suites, type checks) ran during the bench.',
    `- nestjs-holdup ${v['nestjs-holdup']}, @nestjs/core ${v['@nestjs/core']}, @nestjs/platform-express ${v['@nestjs/platform-express']} (express ${v.express}), ` +
      `@nestjs/platform-fastify ${v['@nestjs/platform-fastify']} (fastify ${v.fastify}), @nestjs/throttler ${v['@nestjs/throttler']}, ` +
      `rate-limiter-flexible ${v['rate-limiter-flexible']}, autocannon ${v.autocannon}, ioredis ${v.ioredis}, redis-server ${v['redis-server']}.`,
    '',
    '## Caveats: read ratios, not absolute numbers',
    '',
    '- This is a noisy, shared 2-core virtual machine. Absolute figures (req/s, ns) move by 2× from one minute to the next and say little about your hardware; ' +
      'what the bench is built for is the **ratios between variants measured side by side in the same run**.',
    '- Every figure is a median over repetitions run interleaved (all variants once, then all again, the order rotated each time), so a slow minute falls on every variant rather than on one. ' +
      'In the HTTP tables "× baseline" is the ratio of the medians and "range of ×" the spread of the per-repetition ratios (each run against the baseline run of the same repetition): ' +
      'a difference smaller than that spread is noise.',
    '- HTTP: each server runs in a child process of its own (autocannon, in the parent, would otherwise take CPU from it). ' +
      "Besides req/s, the bench reads the server process's CPU time over each run: **CPU µs per request** is much less sensitive to the other jobs than throughput, " +
      'and "× by CPU" (baseline CPU per request ÷ the variant\'s) is the throughput ratio a CPU-bound server would see. ' +
      "It is not free of noise either: much of it is the kernel's loopback work inside `writev`, whose cost moves with the load. " +
      "Differences of a few percent, a few µs per request, are below what this machine can resolve over HTTP; the guard micro-benchmark and its profile measure the guard's own cost directly. " +
      "On this VM a large share of a hello-world request is spent writing to the socket (`writev`), which dilutes the limiter's share compared with bare metal. " +
      'Two calibration variants, a global guard that returns true and a global no-op interceptor, show what Nest itself charges for any guard or interceptor on this machine.',
    "- The limits are set never to deny (we measure the decision, not 429s), except in the denied cases (issue 27: the guard micro-benchmark's `*-denied` and the HTTP `*-denied` variants on Fastify), where every request after a client's first is a 429. Our limit is 100 000/s with a burst of 100 000 rather than 1e9/s: " +
      'at 1e9/s one token is 1e-6 ms, below the resolution of a double holding `Date.now()`, and the bucket would never move.',
    '- @nestjs/throttler keeps a sliding log of hits per key and filters it on every call, so with a limit that is never reached its cost grows with rate × ttl ' +
      '(see the micro-benchmark). The HTTP variant uses ttl 1 s, which keeps the log to about one second of traffic; with the usual ttl of 60 s the log, and the cost, would be 60× longer.',
    '- The guard micro-benchmark calls `canActivate` of guards taken from real (initialised, not listening) Nest applications on the Fastify adapter, with a fresh ' +
      "`ExecutionContextHost` and request object per call and a stand-in reply object for headers, awaiting the result as Nest does: the guard's own cost, free of sockets and of autocannon.",
    '- The decision micro-benchmark calls each library the way its guard does per request; ours answers synchronously, the other two return promises, which the caller awaits one at a time.',
    "- Memory figures and pauses come from one run; a max is one observation. Calls over 1 ms are checked against V8 `gc` performance entries to tell a collection from the store's own work.",
    '',
    '## Findings of this run',
    '',
    ...observations(results).map((note) => `- ${note}`),
    '',
    ...issue27Notes(results),
  ];
  for (const section of allSections(results))
    lines.push(`## ${section.title}`, '', markdownTable(section.header, section.rows), '');
  lines.push(
    '## How it is measured',
    '',
    '- `npm run bench` builds the package (`node scripts/build.mjs`), then runs `node bench/index.mjs`, whose plain `.mjs` files import the built package (`nestjs-holdup`, `nestjs-holdup/redis`, `nestjs-holdup/two-tier`).',
    `- HTTP (\`bench/http\`): autocannon's programmatic API, ${results.http?.settings.connections ?? 10} connections; every server starts once (${results.http?.settings.startWarmupSeconds ?? 2} s of warm-up) and stays up between its runs; ` +
      `each run of the first repetition is ${results.http?.settings.warmupSeconds ?? 1} s of warm-up then ${results.http?.settings.durationSeconds ?? 2} s measured (a server idle between its runs answers its first second slower), ` +
      'later repetitions measure at once (by then each server has had 5 s of traffic: a second warm-up per run cost the bench ~40 s for no change of the medians); ' +
      `${results.http?.settings.repetitions ?? 3} repetitions interleaved (the order rotated each time), on one hello-world \`GET /\` route. ` +
      'Variants: no limiter; a no-op global guard and a no-op global interceptor (calibration); the holdup global guard with MemoryStore (headers `draft`, then `false`); ' +
      "a route whose `@RateLimit({ ..., adaptive: { min, max } })` binds `RateLimitInterceptor`; `@nestjs/throttler`'s global `ThrottlerGuard` with its default in-memory storage. Keys are the client IP (one client). " +
      `The denial target is read from ${results.http?.denialDuel?.pairs.length ?? 6} more pairs on Fastify run back to back after the repetitions (the floor guard's 429s then ours, the order alternated): each pair's ratio, their median. ` +
      "A profile of such a flood (`node --cpu-prof` on each server, 2026-11-28) found the server idle 23–33 % of the time and `writev` 49–59 % of its busy samples: autocannon, on the same two cores, sets the pace; the limiter's code was 11 % of the busy samples for ours, the floor guard and its `HttpException` 6.5 % for the floor's.",
    `- Guard (\`bench/guard\`): one process, ${results.guard?.settings.repetitions ?? 5} repetitions of ${results.guard ? results.guard.settings.calls.toLocaleString('en-US') : '200,000'} calls per guard, interleaved, after a warm-up; 100k client addresses round-robin, in a random order (shuffled passes from the run's seed, the same for ours and the floor) or one; ` +
      "**CPU time of the process per call** (user + system, GC threads included; wall time is kept in the results as `wallNsPerCallMedian`): other jobs on the machine stretch wall time, not the guard's CPU time. " +
      "Denials go through the route's exceptions handler as Nest's router builds it (`RouterExceptionFilters`): the module's `RateLimitExceptionFilter` for ours, Nest's own filter for the floor guard (which writes `Retry-After` and throws a 429 `HttpException`). " +
      'The metrics cases and their baseline (`holdup-fresh`) are created before each run and given one untimed pass over the clients, so that the timed run charges held buckets, as `holdup` does. ' +
      `They run in a process of their own, with a no-op guard of their own (${results.guard?.settings.metricsNoopNsPerCall ?? '?'} ns), ${results.guard?.settings.metricsRepetitions ?? 9} repetitions: their cost is a difference of ~100 ns on ~1.3 µs, and measured among the dozen other applications of the main process (about a million buckets held) it moved from +8 % to +59 % from one run to the next with where the freshly created app's buckets landed in the heap (\`BucketShard.slotOf\`, the cache misses of the caller lookup, was 27 % of the samples), against +3 % to +8 % alone (\`BENCH_GUARD_ONLY=noop,holdup-fresh,holdup-otel,holdup-prom node bench/guard/guard.mjs 100000 5\`, three runs, 2026-11-28).`,
    `- Decisions (\`bench/micro\`): each case in a fresh process, ${results.micro?.settings.repetitions ?? 5} repetitions interleaved (${results.micro?.settings.randomOrderRepetitions ?? 3} for the random-order cells of issue 27), ${results.micro ? results.micro.settings.syncIterations.toLocaleString('en-US') : '1,000,000'} decisions per run for synchronous cases and ` +
      `${results.micro ? results.micro.settings.asyncIterations.toLocaleString('en-US') : '300,000'} for promise-based ones, after a warm-up (and, for the 100k-key cases, after every key exists). ` +
      "A random-order run walks a sequence of 262,144 callers (shuffled passes over the pool), built in the case's own process; only the cases of ours load the package (`nestjs-holdup`, with Nest: ~0.5 s per process). " +
      'Before these cuts (issue 27) every process built the random orders of all 12 random-order cases (1M callers each) before timing its own: ' +
      '`/usr/bin/time node bench/micro/decision.mjs holdup-1-allowed 1000000` took 3.35 s, now 1.09 s; the section took 626 s of the 17-minute bench.',
    '- Memory (`bench/memory`): `node --expose-gc`; heap used after `gc()` before and after inserting the live keys; pauses with `process.hrtime` around each call. ' +
      'Checks are built as the guard builds them: namespace `tb|default|HelloController.hello|`, identity a client address (`10.x.y.z`), the key given whole and in parts. ' +
      'Churn (issue 14): in a process of its own run with `--trace-gc`, a store at `maxKeys` 1M is filled, then new callers (each evicting one) alternate with updates of existing callers, ' +
      `${results.memory?.settings.churnChunk ?? 1000} calls per \`setImmediate\` macrotask as a server would run them; \`monitorEventLoopDelay({ resolution: 1 })\` and each macrotask's start-to-start time (a stall: over 50 ms) ` +
      "during the churn only; GC pauses by kind from the `--trace-gc` lines between the script's own `gc()` calls; the control runs the same loop, strings and objects with a GCRA decision on one number and no store, in another process.",
    '- Redis (`bench/redis`): starts its own `redis-server` on a free port (no persistence), **pinned to one core with `taskset -c <last core>`** (`BENCH_REDIS_CORE` to choose; Node is left to the scheduler), one ioredis client shared by both stores; ' +
      'the stores get `timeoutMs: 2000` (a throughput run: with Redis pinned on a loaded machine, the default 100 ms failed whole runs); ' +
      "one request at a time (c=1): each call timed from the call to its answer, p50 and p99 per run, medians of the runs; `holdup-uncorked` is the same store on a client that is not recognisably ioredis' standalone one, so its scripts go through the client's own `evalsha` (no corked sender): the difference is what the corked sender adds to a lone request; " +
      `${redisLoadsText(results.redis)}; ` +
      "`INFO cpu` around each run for the server's CPU, `CONFIG RESETSTAT` + `INFO commandstats` for the commands.",
    '- TwoTierStore (`bench/redis`, same server and client): for each workload (hot keys, cold keys, a saturated key) every run builds a fresh TwoTierStore or RedisStore ' +
      "(key prefixes of their own; requests carry no `failMode: 'local'`, so that a timeout fails the run rather than being decided locally) and closes it at the end, " +
      'so the leases taken while demand ramps up and the tokens given back at `close()` are part of the run; script calls are counted by the server ' +
      '(`CONFIG RESETSTAT`, then EVALSHA + EVAL in `INFO commandstats`) and by the store (`stats().redisCalls`, `RedisStore.calls`).',
    '',
  );
  return lines.join('\n');
}
