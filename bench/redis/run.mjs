// Redis section: runs bench/redis/redis.mjs (which starts its own redis-server).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { log, median, QUICK, round, runNodeJson, withRetry } from '../lib/util.mjs';

const SCRIPT = fileURLToPath(new URL('./redis.mjs', import.meta.url));
const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

export const REDIS_SETTINGS = QUICK
  ? { decisions: 10_000, repetitions: 3 }
  : { decisions: 30_000, repetitions: 3 };

/**
 * The load settings of issue 14's Redis targets: 16 and 256 decisions in
 * flight (and issue 27's one at a time), each with ioredis' plain client and with `enableAutoPipelining`.
 * The first is the main run (its two-tier comparison included).
 */
const LOADS = [
  { inFlight: 16, autoPipelining: false },
  // One request at a time (issue 27): decisions/s, p50 and p99, and the corked sender's added latency.
  { inFlight: 1, autoPipelining: false },
  { inFlight: 256, autoPipelining: false },
  { inFlight: 16, autoPipelining: true },
  { inFlight: 256, autoPipelining: true },
];

export async function runRedis() {
  if (!existsSync(REDIS_SERVER)) return { skipped: `no redis-server at ${REDIS_SERVER}` };
  const [main, ...others] = LOADS;
  const result = await runLoad(main, false);
  if (result.skipped) return result;
  const loads = [loadRow(main, result)];
  for (const load of others) loads.push(loadRow(load, await runLoad(load, true)));
  return { ...result, loads };
}

function runLoad({ inFlight, autoPipelining }, skipTwoTier) {
  const env = {
    BENCH_REDIS_IN_FLIGHT: String(inFlight),
    BENCH_REDIS_AUTO_PIPELINING: autoPipelining ? '1' : '0',
    BENCH_REDIS_SKIP_TWO_TIER: skipTwoTier ? '1' : '0',
  };
  return withRetry(
    `redis ${inFlight} in flight${autoPipelining ? ', auto-pipelining' : ''}`,
    async () =>
      summarise(
        await runNodeJson(SCRIPT, [REDIS_SETTINGS.decisions, REDIS_SETTINGS.repetitions], [], {
          env,
        }),
      ),
  );
}

/** One load setting: decisions/s of the three contenders, ours against the others. */
function loadRow(load, result) {
  const [ours, rlf, floor] = result.rows;
  return {
    ...load,
    redisPinnedTo: result.settings.redisPinnedTo,
    ...(result.latency && { latency: result.latency }),
    ours: ours.decisionsPerSecondMedian,
    oursRuns: ours.decisionsPerSecondRuns,
    rlf: rlf.decisionsPerSecondMedian,
    floor: floor?.decisionsPerSecondMedian,
    oursRedisCpu: ours.redisCpuMicrosPerDecisionMedian,
    rlfRedisCpu: rlf.redisCpuMicrosPerDecisionMedian,
  };
}

function summarise(raw) {
  if (raw.skipped) return raw;
  const summary = (name) => {
    const runs = raw.runs[name];
    return {
      decisionsPerSecondRuns: runs.map((r) => Math.round(r.perSecond)),
      decisionsPerSecondMedian: Math.round(median(runs.map((r) => r.perSecond))),
      nodeCpuMicrosPerDecisionMedian: round(median(runs.map((r) => r.nodeCpuMicrosPerDecision)), 1),
      redisCpuMicrosPerDecisionMedian: round(
        median(runs.map((r) => r.redisCpuMicrosPerDecision)),
        1,
      ),
      commandsPerDecision: raw.commands[name].perDecision,
      scriptMicrosPerDecision: round(raw.commands[name].scriptMicrosPerDecision ?? NaN, 2),
    };
  };
  const holdup = summary('holdup');
  // One request at a time: medians over the runs of each run's p50 and p99 (µs).
  const latencyOf = (name) => {
    const runs = raw.runs[name];
    if (!runs?.[0] || runs[0].p50Micros === undefined) return undefined;
    return {
      p50Micros: round(median(runs.map((r) => r.p50Micros)), 1),
      p99Micros: round(median(runs.map((r) => r.p99Micros)), 1),
      decisionsPerSecond: Math.round(median(runs.map((r) => r.perSecond))),
    };
  };
  const latency = raw.inFlight === 1 && {
    holdup: latencyOf('holdup'),
    holdupUncorked: latencyOf('holdup-uncorked'),
    rlf: latencyOf('rlf'),
    floor: latencyOf('floor'),
  };
  const twoTier = raw.twoTier?.skipped ? raw.twoTier : twoTierSummary(raw.twoTier);
  const rlf = summary('rlf');
  // Older results (before the floor was measured) have none.
  const floor = raw.runs.floor ? summary('floor') : undefined;
  const ofFloor = (row) =>
    floor
      ? {
          percentOfFloor: round(
            (100 * row.decisionsPerSecondMedian) / floor.decisionsPerSecondMedian,
            1,
          ),
        }
      : {};
  log(
    `redis (${raw.inFlight} in flight${raw.autoPipelining ? ', auto-pipelining' : ''}): holdup ${holdup.decisionsPerSecondMedian}/s, rate-limiter-flexible ${rlf.decisionsPerSecondMedian}/s` +
      (floor
        ? `, EVALSHA floor ${floor.decisionsPerSecondMedian}/s (holdup ${ofFloor(holdup).percentOfFloor} %, rate-limiter-flexible ${ofFloor(rlf).percentOfFloor} % of the floor)`
        : ''),
  );
  return {
    settings: {
      ...REDIS_SETTINGS,
      inFlight: raw.inFlight,
      autoPipelining: raw.autoPipelining,
      keys: raw.keys,
      redisVersion: raw.redisVersion,
      redisPinnedTo: raw.redisPinnedTo,
    },
    ...(latency && { latency }),
    rows: [
      { store: 'holdup RedisStore (server time)', ...holdup, ratioToOurs: 1, ...ofFloor(holdup) },
      {
        store: 'rate-limiter-flexible RateLimiterRedis',
        ...rlf,
        ratioToOurs: round(rlf.decisionsPerSecondMedian / holdup.decisionsPerSecondMedian, 2),
        ...ofFloor(rlf),
      },
      ...(floor
        ? [
            {
              store: "EVALSHA floor (script 'return 1', same key and arguments)",
              ...floor,
              ratioToOurs: round(
                floor.decisionsPerSecondMedian / holdup.decisionsPerSecondMedian,
                2,
              ),
              percentOfFloor: 100,
            },
          ]
        : []),
    ],
    storeTimeouts: raw.storeTimeouts,
    storeErrors: raw.storeErrors,
    twoTier,
  };
}

const STORES = { redis: 'holdup RedisStore', twoTier: 'holdup TwoTierStore' };

/** Medians of one store's runs on one workload (see tieredRun in redis.mjs). */
function tieredRow(runs) {
  const med = (pick) => median(runs.map(pick));
  const counter = (name) =>
    runs[0].counters[name] === undefined ? undefined : med((r) => r.counters[name]);
  return {
    decisionsPerSecondRuns: runs.map((r) => Math.round(r.perSecond)),
    decisionsPerSecondMedian: Math.round(med((r) => r.perSecond)),
    nodeCpuMicrosPerDecisionMedian: round(
      med((r) => r.nodeCpuMicrosPerDecision),
      1,
    ),
    redisCpuMicrosPerDecisionMedian: round(
      med((r) => r.redisCpuMicrosPerDecision),
      2,
    ),
    // Rounded to significant digits: a leased hot key makes one call per thousands of decisions.
    serverScriptCallsPerDecisionMedian: Number(
      med((r) => r.serverScriptCallsPerDecision).toPrecision(4),
    ),
    serverScriptCallsPerDecisionRuns: runs.map((r) =>
      Number(r.serverScriptCallsPerDecision.toPrecision(4)),
    ),
    storeCallsPerDecisionMedian: Number(med((r) => r.storeCallsPerDecision).toPrecision(4)),
    storeCallsPerDecisionRuns: runs.map((r) => Number(r.storeCallsPerDecision.toPrecision(4))),
    admittedMedian: med((r) => r.admitted),
    limitOverRunMedian: Math.floor(med((r) => r.limitOverRun)),
    leasesTakenMedian: counter('leasesTaken'),
    localDecisionsMedian: counter('localDecisions'),
    denyCacheHitsMedian: counter('denyCacheHits'),
    // Summed over the runs: any of them is worth knowing about.
    timeouts: runs.reduce((sum, r) => sum + r.counters.timeouts, 0),
    errors: runs.reduce((sum, r) => sum + r.counters.errors, 0),
    fallbacks: runs.reduce((sum, r) => sum + (r.counters.fallbacks ?? 0), 0),
  };
}

/** TwoTierStore vs RedisStore: one row per store and workload, ratios against RedisStore. */
function twoTierSummary(raw) {
  if (!raw || raw.skipped) return raw;
  const workload = (name) => {
    const redis = tieredRow(raw[name].redis);
    const twoTier = tieredRow(raw[name].twoTier);
    const versus = (row) => ({
      ratioToRedisStore: round(row.decisionsPerSecondMedian / redis.decisionsPerSecondMedian, 2),
      callsRatioToRedisStore: Number(
        (row.storeCallsPerDecisionMedian / redis.storeCallsPerDecisionMedian).toPrecision(4),
      ),
    });
    return [
      { store: STORES.redis, ...redis, ...versus(redis) },
      { store: STORES.twoTier, ...twoTier, ...versus(twoTier) },
    ];
  };
  const result = {
    settings: {
      hotKeys: raw.hotKeys,
      openLimit: raw.openLimit,
      saturatedLimit: raw.saturatedLimit,
    },
    hot: workload('hot'),
    cold: workload('cold'),
    saturated: workload('saturated'),
  };
  const [redisHot, twoTierHot] = result.hot;
  const twoTierCold = result.cold[1];
  log(
    `redis: hot keys RedisStore ${redisHot.decisionsPerSecondMedian}/s, TwoTierStore ${twoTierHot.decisionsPerSecondMedian}/s ` +
      `(${twoTierHot.storeCallsPerDecisionMedian} Redis calls per decision); cold keys TwoTierStore ${twoTierCold.storeCallsPerDecisionMedian} call per decision`,
  );
  // A cold key must cost TwoTierStore exactly what it costs RedisStore: one call of the store.
  // The server counts script calls, fewer when concurrent calls share one (adapters/redis/script-batch.ts),
  // never more.
  const storeCalls = twoTierCold.storeCallsPerDecisionRuns;
  const serverCalls = twoTierCold.serverScriptCallsPerDecisionRuns;
  if (storeCalls.some((calls) => calls !== 1) || serverCalls.some((calls) => calls > 1)) {
    log(
      `redis: WARNING TwoTierStore made ${storeCalls.join(' / ')} store calls and ${serverCalls.join(' / ')} server script calls per cold-key decision (1 and at most 1 expected)`,
    );
  }
  return result;
}
