// Redis decisions/s: nestjs-holdup RedisStore (server time) vs
// rate-limiter-flexible RateLimiterRedis, same ioredis client, against a
// redis-server this script starts on a free port and stops at the end.
//   node bench/redis/redis.mjs <decisionsPerRun> <repetitions>
// Prints one JSON line. BENCH_REDIS_IN_FLIGHT decisions in flight (50 when
// run by hand; npm run bench sets 16 and 256, bench/redis/run.mjs), 10k distinct keys,
// repetitions interleaved (A B C, C B A, A B C). A third contender, the
// floor, is an EVALSHA of a script that only answers 1, with the key and
// argument count of a RedisStore consume: what the round trip, ioredis and
// Redis' script call cost before any rate limiting is done. Then `INFO commandstats` around a
// run of each, to count the Redis commands per decision.
// Then TwoTierStore vs RedisStore on three workloads (hot keys, cold keys, a
// saturated key), same concurrency, interleaved too, Redis script calls
// counted both by the server and by the stores.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort, PINNING, startRedisServer } from '../lib/redis-server.mjs';

// Decisions in flight; BENCH_REDIS_IN_FLIGHT and BENCH_REDIS_AUTO_PIPELINING=1 (ioredis'
// enableAutoPipelining) set the load: npm run bench runs 16 and 256, each plain and
// auto-pipelined (bench/redis/run.mjs); 50, plain, when run by hand without them.
const IN_FLIGHT = Number(process.env.BENCH_REDIS_IN_FLIGHT ?? 50);
const AUTO_PIPELINING = process.env.BENCH_REDIS_AUTO_PIPELINING === '1';
// BENCH_REDIS_SKIP_TWO_TIER=1: the three-contender comparison only (the extra in-flight settings of npm run bench).
const SKIP_TWO_TIER = process.env.BENCH_REDIS_SKIP_TWO_TIER === '1';
const KEYS = 10_000;
/**
 * The stores' `timeoutMs` here: a throughput run, not a test of timeouts.
 * With Redis pinned to one core of a shared 2-core machine, another job on
 * that core stalled Redis past the default 100 ms and failed whole runs
 * (rate-limiter-flexible, which has no deadline, just waited).
 */
const TIMEOUT_MS = 2_000;
const NEVER = { algorithm: 'token-bucket', rate: 1e6, burst: 1e9 };
/** The floor's script: no work at all (see the file comment). */
const FLOOR_LUA = 'return 1';
const FLOOR_SHA = createHash('sha1').update(FLOOR_LUA).digest('hex');
/** Keys of the RedisStore vs rate-limiter-flexible comparison: 10k of them, visited in a scattered order. */
const spread = (i) => `user-${(i * 7919) % KEYS}`;

// TwoTierStore vs RedisStore.
const HOT_KEYS = 10;
/**
 * Never reached either, but with a burst whose lease cap (maxLeaseShare 0.25
 * x burst = 250k tokens) stays far above what a lease is sized to (half a
 * leaseTtlMs, 0.5 s, of a key's demand: a few 10k tokens here), so leases
 * are sized by demand, not by the cap.
 */
const OPEN = { algorithm: 'token-bucket', rate: 1e6, burst: 1e6 };
/** Offered far above its rate: most decisions are denials. */
const SATURATED = { algorithm: 'token-bucket', rate: 1000, burst: 100 };
/** Makes the keys of every cold or saturated run new (a cold key never seen, a saturated bucket starting full). */
let runCount = 0;
const WORKLOADS = {
  hot: { limit: OPEN, neverDenied: true, keys: () => (i) => `hot-${i % HOT_KEYS}` },
  cold: {
    limit: OPEN,
    neverDenied: true,
    keys: () => {
      const run = runCount++;
      return (i) => `cold-${run}-${i}`;
    },
  },
  saturated: {
    limit: SATURATED,
    neverDenied: false,
    keys: () => {
      const key = `saturated-${runCount++}`;
      return () => key;
    },
  },
};

async function startRedis() {
  const port = await freePort();
  return { child: await startRedisServer(port), port };
}

async function redisCpuSeconds(client) {
  const info = await client.info('cpu');
  const field = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/**
 * `decisions` calls of `decide(key)`, IN_FLIGHT at a time: decisions per
 * second, and the CPU time per decision of this process and of redis-server
 * (less sensitive than throughput to the machine's other jobs).
 */
async function measure(client, decisions, decide) {
  const redisBefore = await redisCpuSeconds(client);
  const cpuBefore = process.cpuUsage();
  const latencies = IN_FLIGHT === 1 ? new Float64Array(decisions) : undefined;
  const perSecond = await throughput(decisions, decide, latencies);
  const cpu = process.cpuUsage(cpuBefore);
  const redisAfter = await redisCpuSeconds(client);
  return {
    perSecond,
    ...(latencies ? latencySummary(latencies) : {}),
    nodeCpuMicrosPerDecision: (cpu.user + cpu.system) / decisions,
    redisCpuMicrosPerDecision: ((redisAfter - redisBefore) * 1e6) / decisions,
  };
}

/** p50 and p99 of one run's decision latencies, in µs (nearest rank). */
function latencySummary(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
  return { p50Micros: at(0.5), p99Micros: at(0.99) };
}

/**
 * `decisions` calls of `decide(keyOf(i))`, IN_FLIGHT at a time; with
 * `latencies`, each call's time from the call to its answer (µs).
 */
async function drive(decisions, decide, keyOf, latencies) {
  let next = 0;
  let admitted = 0;
  const worker = async () => {
    while (next < decisions) {
      const i = next++;
      if (latencies === undefined) {
        if (await decide(keyOf(i))) admitted++;
        continue;
      }
      const start = process.hrtime.bigint();
      if (await decide(keyOf(i))) admitted++;
      latencies[i] = Number(process.hrtime.bigint() - start) / 1e3;
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, admitted };
}

async function throughput(decisions, decide, latencies) {
  const { seconds, admitted } = await drive(decisions, decide, spread, latencies);
  if (admitted < decisions)
    throw new Error(`${decisions - admitted} decisions denied: the limit should never be reached`);
  return decisions / seconds;
}

async function commandStats(client, micros) {
  const info = await client.info('commandstats');
  const stats = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (match) {
      stats[match[1]] = Number(match[2]);
      if (micros) micros[match[1]] = Number(match[3]);
    }
  }
  return stats;
}

/** EVALSHA + EVAL calls since the last CONFIG RESETSTAT: every script call, whatever the operation. */
async function scriptCalls(client) {
  const stats = await commandStats(client);
  return (stats.evalsha ?? 0) + (stats.eval ?? 0);
}

/**
 * The two stores compared with TwoTierStore, each with a key prefix of its
 * own so that they never share a bucket. `counters` reads a closed store.
 */
function tieredContenders(client, RedisStore, TwoTierStore) {
  return {
    redis: {
      open: () => new RedisStore({ client, keyPrefix: 'bench-rs:', timeoutMs: TIMEOUT_MS }),
      counters: (store) => ({
        redisCalls: store.calls,
        timeouts: store.timeouts,
        errors: store.errors,
      }),
    },
    twoTier: {
      // Requests carry no failMode 'local': a Redis timeout fails the run (and
      // the section retries it) rather than turning into local decisions that
      // would pass for saved calls.
      open: () => new TwoTierStore({ client, keyPrefix: 'bench-tt:', timeoutMs: TIMEOUT_MS }),
      counters: (store) => {
        const stats = store.stats();
        return {
          redisCalls: stats.redisCalls,
          localDecisions: stats.localDecisions,
          leasesTaken: stats.leasesTaken,
          leasedTokens: stats.leasedTokens,
          returnedTokens: stats.returnedTokens,
          lostTokens: stats.lostTokens,
          denyCacheHits: stats.denyCacheHits,
          fallbacks: stats.fallbacks,
          timeouts: store.redisStore.timeouts,
          errors: store.redisStore.errors,
        };
      },
    },
  };
}

/**
 * One run of `workload` on a fresh store, closed at the end: what a TwoTierStore
 * spends while its leases ramp up, and the give-backs of close(), belong to
 * the run (longer runs amortize them). Script calls are counted by the
 * server (CONFIG RESETSTAT before, INFO commandstats after) and by the store.
 */
async function tieredRun(client, decisions, contender, workload) {
  const store = contender.open();
  const keyOf = workload.keys();
  const { limit } = workload;
  // TwoTierStore answers synchronously from a lease: `await` takes both.
  const decide = async (key) =>
    (await store.consume({ checks: [{ key, limit, cost: 1 }], now: Date.now() })).allowed;
  await client.config('RESETSTAT');
  const redisBefore = await redisCpuSeconds(client);
  const cpuBefore = process.cpuUsage();
  const { seconds, admitted } = await drive(decisions, decide, keyOf);
  await store.close();
  const cpu = process.cpuUsage(cpuBefore);
  const redisAfter = await redisCpuSeconds(client);
  const serverScriptCalls = await scriptCalls(client);
  const counters = contender.counters(store);
  if (workload.neverDenied && admitted < decisions)
    throw new Error(
      `${decisions - admitted} decisions denied: the limit should never be reached (${JSON.stringify(counters)}, limit ${JSON.stringify(limit)})`,
    );
  return {
    perSecond: decisions / seconds,
    nodeCpuMicrosPerDecision: (cpu.user + cpu.system) / decisions,
    redisCpuMicrosPerDecision: ((redisAfter - redisBefore) * 1e6) / decisions,
    serverScriptCallsPerDecision: serverScriptCalls / decisions,
    storeCallsPerDecision: counters.redisCalls / decisions,
    admitted,
    // What the bucket could have admitted over the run: its burst, and its rate for the run's duration.
    limitOverRun: limit.burst + limit.rate * seconds,
    counters,
  };
}

/** Every contender on `workload`, repetitions interleaved (A B, B A, ...), after a warm-up run each. */
async function compareTiered(client, decisions, repetitions, contenders, workload) {
  const names = Object.keys(contenders);
  for (const name of names)
    await tieredRun(client, Math.min(decisions, 2_000), contenders[name], workload);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  for (let rep = 0; rep < repetitions; rep++) {
    const order = rep % 2 === 0 ? names : [...names].reverse();
    for (const name of order)
      runs[name].push(await tieredRun(client, decisions, contenders[name], workload));
  }
  return runs;
}

async function twoTierComparison(client, decisions, repetitions, RedisStore) {
  let TwoTierStore;
  try {
    ({ TwoTierStore } = await import('nestjs-holdup/two-tier'));
  } catch (error) {
    return { skipped: `nestjs-holdup/two-tier does not import: ${error.message}` };
  }
  const contenders = tieredContenders(client, RedisStore, TwoTierStore);
  const result = { hotKeys: HOT_KEYS, openLimit: OPEN, saturatedLimit: SATURATED };
  for (const [name, workload] of Object.entries(WORKLOADS))
    result[name] = await compareTiered(client, decisions, repetitions, contenders, workload);
  return result;
}

async function main() {
  const [decisionsArg, repetitionsArg] = process.argv.slice(2);
  const decisions = Number(decisionsArg);
  const repetitions = Number(repetitionsArg);

  let RedisStore;
  try {
    ({ RedisStore } = await import('nestjs-holdup/redis'));
  } catch (error) {
    process.stdout.write(
      JSON.stringify({ skipped: `nestjs-holdup/redis does not import: ${error.message}` }) + '\n',
    );
    return;
  }
  const { RateLimiterRedis } = await import('rate-limiter-flexible');

  const redis = await startRedis();
  const client = new Redis({
    port: redis.port,
    host: '127.0.0.1',
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: AUTO_PIPELINING,
  });
  try {
    await client.ping();
    const store = new RedisStore({ client, keyPrefix: 'bench:', timeoutMs: TIMEOUT_MS });
    const limiter = new RateLimiterRedis({
      storeClient: client,
      keyPrefix: 'rlf',
      points: 1e9,
      duration: 60,
    });
    // One request at a time: the same store with its scripts sent by the
    // client's own evalsha (a client that is not recognisably ioredis'
    // standalone one gets no corked sender: script-sender.ts), to show what
    // the corked sender adds to a lone request's latency.
    const plainClient = {
      evalsha: (...args) => client.evalsha(...args),
      eval: (...args) => client.eval(...args),
      del: (...args) => client.del(...args),
      ping: () => client.ping(),
      get status() {
        return client.status;
      },
    };
    const uncorked =
      IN_FLIGHT === 1
        ? new RedisStore({ client: plainClient, keyPrefix: 'bench:', timeoutMs: TIMEOUT_MS })
        : undefined;
    const contenders = {
      holdup: async (key) => {
        const result = await store.consume({
          checks: [{ key, limit: NEVER, cost: 1 }],
          now: Date.now(),
        });
        return result.allowed;
      },
      ...(uncorked && {
        'holdup-uncorked': async (key) =>
          (await uncorked.consume({ checks: [{ key, limit: NEVER, cost: 1 }], now: Date.now() }))
            .allowed,
      }),
      rlf: async (key) => {
        await limiter.consume(key); // rejects when over the limit
        return true;
      },
      floor: async (key) =>
        (await client.evalsha(
          FLOOR_SHA,
          1,
          `bench:{${key}}`,
          '',
          '0',
          '1000000',
          '1000000000',
          '1',
        )) === 1,
    };
    await client.script('LOAD', FLOOR_LUA);
    const names = Object.keys(contenders);

    // Warm-up: script loading (EVALSHA/NOSCRIPT fallbacks), JIT, connection.
    for (const name of names) await throughput(Math.min(decisions, 5_000), contenders[name]);

    const runs = Object.fromEntries(names.map((name) => [name, []]));
    for (let rep = 0; rep < repetitions; rep++) {
      const order = rep % 2 === 0 ? names : [...names].reverse();
      for (const name of order) runs[name].push(await measure(client, decisions, contenders[name]));
    }

    const commands = {};
    const sample = Math.min(decisions, 10_000);
    for (const name of names) {
      await client.config('RESETSTAT');
      await throughput(sample, contenders[name]);
      const micros = {};
      const stats = await commandStats(client, micros);
      // Our own CONFIG RESETSTAT and INFO calls are not decisions.
      for (const cmd of Object.keys(stats))
        if (cmd === 'info' || cmd.startsWith('config')) delete stats[cmd];
      commands[name] = {
        decisions: sample,
        // Redis' own time in the script call, commands inside it included (INFO commandstats usec):
        // where a decision's server-side time goes, apart from reading and writing the socket.
        scriptMicrosPerDecision: ((micros.evalsha ?? 0) + (micros.eval ?? 0)) / sample,
        perDecision: Object.fromEntries(
          Object.entries(stats).map(([cmd, calls]) => [cmd, calls / sample]),
        ),
      };
    }

    await store.close();
    await uncorked?.close();
    const twoTier = SKIP_TWO_TIER
      ? { skipped: 'BENCH_REDIS_SKIP_TWO_TIER' }
      : await twoTierComparison(client, decisions, repetitions, RedisStore);

    const serverVersion = /redis_version:(\S+)/.exec(await client.info('server'))?.[1];
    process.stdout.write(
      JSON.stringify({
        redisVersion: serverVersion,
        inFlight: IN_FLIGHT,
        redisPinnedTo: PINNING.pinnedTo,
        autoPipelining: AUTO_PIPELINING,
        keys: KEYS,
        decisions,
        repetitions,
        runs,
        commands,
        storeCalls: store.calls,
        storeTimeouts: store.timeouts,
        storeErrors: store.errors,
        twoTier,
      }) + '\n',
    );
  } finally {
    // Every store is closed by now (the tiered runs close theirs); the client last.
    client.disconnect();
    redis.child.kill('SIGTERM');
  }
}

await main();
process.exit(0);
