// HTTP throughput: hello-world GET on Nest 12, Express and Fastify. Each
// (platform, variant) server runs in a child process of its own, started once
// and idle between its runs, so the server has a core to itself (autocannon
// runs here, in the parent) and no server start-up sits in the timed part.
//
// Repetitions are interleaved (A B C D, B C D A, ...): a slow minute on this
// shared machine then lands on every variant instead of one. Every run is
// preceded by its own warm-up: a Nest server left idle for the ~20 s between
// two of its runs answers its first second measurably slower (V8 lets cold
// code and memory go), and the baseline must not be the only warm one.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { log, median, QUICK, round, withRetry } from '../lib/util.mjs';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));

export const VARIANTS = [
  { id: 'baseline', label: 'no limiter (baseline)' },
  { id: 'noop-guard', label: 'calibration: a global guard that returns true' },
  { id: 'noop-interceptor', label: 'calibration: a global no-op interceptor' },
  {
    id: 'floor-guard',
    label:
      'floor: a global guard running a hand-written bucket per client in a Map, writing one header',
  },
  { id: 'holdup', label: 'holdup global guard, MemoryStore, headers: draft' },
  { id: 'holdup-noheaders', label: 'holdup global guard, headers: false' },
  { id: 'holdup-adaptive', label: 'holdup adaptive route (guard + RateLimitInterceptor)' },
  { id: 'throttler', label: '@nestjs/throttler global guard, ttl 1 s' },
  // The denied path (issue 27), on Fastify: every request a 429 (after the first), what a flood costs.
  {
    id: 'floor-guard-denied',
    label: "floor guard denying every request: Retry-After and a 429 answered by Nest's filter",
    platforms: ['fastify'],
    denied: true,
  },
  {
    id: 'holdup-denied',
    label:
      "holdup global guard denying every request: headers draft, Retry-After, the module's filter",
    platforms: ['fastify'],
    denied: true,
  },
];
/** Servers started together (see runHttp). */
const START_AT_ONCE = 4;
const variantsOf = (platform) =>
  VARIANTS.filter((variant) => !variant.platforms || variant.platforms.includes(platform));
export const PLATFORMS = ['express', 'fastify'];

// Durations are whole seconds: autocannon rounds them up.
export const HTTP_SETTINGS = QUICK
  ? {
      connections: 10,
      startWarmupSeconds: 1,
      warmupSeconds: 1,
      durationSeconds: 1,
      repetitions: 3,
      denialPairs: 2,
    }
  : {
      connections: 10,
      startWarmupSeconds: 2,
      warmupSeconds: 1,
      durationSeconds: 2,
      repetitions: 3,
      // Back-to-back pairs for the denial target (duelDenials): 6 x 2 x 2 s.
      denialPairs: 6,
    };

function startServer(platform, variant) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER, platform, variant], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server ${platform} ${variant} did not start in 120 s\n${err}`));
    }, 120_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /READY (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, port: Number(match[1]) });
      }
    });
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server ${platform} ${variant} exited with ${code}\n${err}`));
    });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function cpuOf(child) {
  return new Promise((resolve) => {
    child.once('message', (message) => resolve(message.cpu));
    child.send('cpu');
  });
}

function cannon(port, duration) {
  return autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections: HTTP_SETTINGS.connections,
    pipelining: 1,
    duration,
  });
}

async function measure(servers, platform, variant, warm) {
  const key = `${platform}/${variant}`;
  // A server that died (e.g. dist/ rebuilt under it) is restarted by withRetry, and warmed again.
  const restarted = !servers.has(key) || servers.get(key).child.exitCode !== null;
  if (restarted) servers.set(key, await startServer(platform, variant));
  const { child, port } = servers.get(key);
  if (warm || restarted) await cannon(port, HTTP_SETTINGS.warmupSeconds);
  const before = await cpuOf(child);
  const result = await cannon(port, HTTP_SETTINGS.durationSeconds);
  const after = await cpuOf(child);
  const userMicros = after.user - before.user;
  const systemMicros = after.system - before.system;
  const denied = VARIANTS.find((v) => v.id === variant)?.denied === true;
  // A denied variant answers 429s: all of them but its very first request (a warm-up's).
  const ok = denied ? result.non2xx : result['2xx'];
  if (result.errors || result.timeouts || (denied ? result['2xx'] : result.non2xx)) {
    throw new Error(
      `${platform} ${variant}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx, ${result['2xx']} 2xx`,
    );
  }
  return {
    rps: ok / result.duration,
    cpuMicrosPerRequest: (userMicros + systemMicros) / ok,
    userMicrosPerRequest: userMicros / ok,
    systemMicrosPerRequest: systemMicros / ok,
    p50LatencyMs: result.latency.p50,
    p99LatencyMs: result.latency.p99,
  };
}

export async function runHttp() {
  const { repetitions } = HTTP_SETTINGS;
  const samples = {};
  const perRep = {};
  for (const platform of PLATFORMS) {
    for (const { id } of variantsOf(platform)) {
      samples[`${platform}/${id}`] = [];
      perRep[`${platform}/${id}`] = [];
    }
  }

  const servers = new Map();
  let denialDuel;
  try {
    // Start the servers a few at a time (start-up is mostly module loading;
    // all 18 at once on a loaded 2-core machine took over 30 s each), each
    // kept in `servers` as soon as it is up so that `finally` stops it
    // whatever fails later; then warm each one up alone.
    const keys = PLATFORMS.flatMap((platform) =>
      variantsOf(platform).map(({ id }) => [platform, id]),
    );
    for (let at = 0; at < keys.length; at += START_AT_ONCE) {
      await Promise.all(
        keys.slice(at, at + START_AT_ONCE).map(async ([platform, id]) => {
          const server = await withRetry(`start ${platform} ${id}`, () =>
            startServer(platform, id),
          );
          servers.set(`${platform}/${id}`, server);
        }),
      );
    }
    for (const server of servers.values())
      await cannon(server.port, HTTP_SETTINGS.startWarmupSeconds);
    for (let rep = 0; rep < repetitions; rep++) {
      for (const platform of PLATFORMS) {
        // Rotate the order each repetition so no variant always runs first or last.
        const variants = variantsOf(platform);
        const order = variants.map((_, i) => variants[(i + rep) % variants.length]);
        const runs = {};
        for (const { id } of order) {
          // A warm-up run before each measurement of the first repetition
          // only: by the second, every server has served its start warm-up,
          // that warm-up and a measured run (5 s of traffic, JIT settled);
          // warming again before each of the 36 later runs cost ~40 s a
          // bench (issue 27: the whole bench under 10 minutes).
          const sample = await withRetry(`http ${platform} ${id}`, () =>
            measure(servers, platform, id, rep === 0),
          );
          runs[id] = sample;
          samples[`${platform}/${id}`].push(sample);
          log(
            `http rep ${rep + 1}/${repetitions} ${platform.padEnd(7)} ${id.padEnd(17)} ${Math.round(sample.rps)} req/s, ${sample.cpuMicrosPerRequest.toFixed(1)} µs CPU/req`,
          );
        }
        // Each run against the baseline of the same repetition.
        for (const { id } of variants) {
          const base = runs.baseline;
          const sample = runs[id];
          perRep[`${platform}/${id}`].push({
            ratio: sample.rps / base.rps,
            cpuRatio: base.cpuMicrosPerRequest / sample.cpuMicrosPerRequest,
            cpuDelta: sample.cpuMicrosPerRequest - base.cpuMicrosPerRequest,
          });
        }
      }
    }
    denialDuel = await duelDenials(servers);
  } finally {
    await Promise.all([...servers.values()].map(({ child }) => stopServer(child)));
  }

  const rows = [];
  for (const platform of PLATFORMS) {
    const base = samples[`${platform}/baseline`];
    const baseRps = median(base.map((s) => s.rps));
    const baseCpu = median(base.map((s) => s.cpuMicrosPerRequest));
    for (const { id, label } of variantsOf(platform)) {
      const runs = samples[`${platform}/${id}`];
      const rps = runs.map((s) => s.rps);
      const cpu = median(runs.map((s) => s.cpuMicrosPerRequest));
      const pairs = perRep[`${platform}/${id}`];
      rows.push({
        platform,
        variant: id,
        label,
        rpsRuns: rps.map((value) => Math.round(value)),
        rpsMedian: Math.round(median(rps)),
        // Ratio of the medians; the per-repetition ratios (each run against the
        // baseline run of the same repetition) give its spread.
        ratio: round(median(rps) / baseRps, 3),
        ratioRuns: pairs.map((p) => round(p.ratio, 3)),
        ratioMin: round(Math.min(...pairs.map((p) => p.ratio)), 3),
        ratioMax: round(Math.max(...pairs.map((p) => p.ratio)), 3),
        cpuMicrosPerRequestRuns: runs.map((s) => round(s.cpuMicrosPerRequest, 1)),
        cpuMicrosPerRequestMedian: round(cpu, 1),
        userMicrosPerRequestMedian: round(median(runs.map((s) => s.userMicrosPerRequest)), 1),
        systemMicrosPerRequestMedian: round(median(runs.map((s) => s.systemMicrosPerRequest)), 1),
        // Baseline CPU per request over this variant's: the throughput ratio a
        // CPU-bound server would see.
        cpuRatio: round(baseCpu / cpu, 3),
        cpuMicrosAboveBaseline: round(cpu - baseCpu, 1),
        p50LatencyMsMedian: median(runs.map((s) => s.p50LatencyMs)),
        p99LatencyMsMedian: median(runs.map((s) => s.p99LatencyMs)),
      });
    }
  }
  return { settings: { ...HTTP_SETTINGS, serverInChildProcess: true }, rows, denialDuel };
}

/**
 * The denial target (issue 27) from pairs run back to back on Fastify: the
 * floor guard's 429s then ours, or ours then the floor's, alternately. In the
 * rotation above, seven other runs separate the two, and a 2-core machine
 * shared with autocannon moved their ratio from 0.68x to 1.20x between two
 * runs of the bench; a pair shares its minute. Ratios are ours over the
 * floor's in each pair: req/s (>= 1/1.3 is the target) and CPU per request.
 */
async function duelDenials(servers) {
  const pairs = [];
  for (let pair = 0; pair < HTTP_SETTINGS.denialPairs; pair++) {
    const order =
      pair % 2 === 0
        ? ['floor-guard-denied', 'holdup-denied']
        : ['holdup-denied', 'floor-guard-denied'];
    const runs = {};
    for (const id of order)
      runs[id] = await withRetry(`http denial pair ${id}`, () =>
        measure(servers, 'fastify', id, false),
      );
    const ours = runs['holdup-denied'];
    const floor = runs['floor-guard-denied'];
    pairs.push({
      rpsRatio: round(ours.rps / floor.rps, 3),
      cpuRatio: round(ours.cpuMicrosPerRequest / floor.cpuMicrosPerRequest, 3),
    });
    log(
      `http denial pair ${pair + 1}/${HTTP_SETTINGS.denialPairs}: ours/floor ${pairs.at(-1).rpsRatio} req/s, ${pairs.at(-1).cpuRatio} CPU per request`,
    );
  }
  const rps = pairs.map((p) => p.rpsRatio);
  const cpu = pairs.map((p) => p.cpuRatio);
  return {
    pairs,
    rpsRatioMedian: round(median(rps), 3),
    rpsRatioMin: Math.min(...rps),
    rpsRatioMax: Math.max(...rps),
    cpuRatioMedian: round(median(cpu), 3),
  };
}
