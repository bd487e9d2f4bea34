// Fleet benchmark (issue 29): N = 1, 2, 4, 8, 16, 32 Node processes, each a
// TwoTierStore instance, on one redis-server, offering one hot key
// (rate 200/s, burst 100) 5x its rate: uniform, skewed (one instance 80 %),
// bursty (4x for a quarter of each second), with 10k warm keys, and with
// Redis stopped (SIGSTOP 2 s) and restarted (state lost) mid-run; and
// RedisStore on the uniform load, for latency and calls. At the largest N
// only, uniform and skewed again over FLEET_LONG_MS (20 s): a cold start's
// calls (a first sighting, a join and a give-back per instance, the paces
// shared out) spread over a longer life.
//
//   npm run build && node bench/fleet/run.mjs          all (about 5 minutes)
//   FLEET_N=4,32 FLEET_SCENARIOS=uniform node bench/fleet/run.mjs
//   FLEET_WRITE=1 ...                                   also writes bench/results/fleet.json
//
// Redis round trips are counted by Redis itself (INFO commandstats: EVALSHA +
// EVAL calls, reset before each run). Progress on stderr, the table on stdout.
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort, startRedisServer } from '../lib/redis-server.mjs';
import { analyse } from './analyse.mjs';
import { sumCounts, tokensOf } from './breakdown.mjs';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/esm/adapters/two-tier/index.js', import.meta.url));
const BUILT_SCRIPTS = new URL('../../dist/esm/adapters/redis/scripts/index.js', import.meta.url);
const RESULTS = fileURLToPath(new URL('../results/', import.meta.url));
const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

const RATE = 200;
const BURST = 100;
const OFFERED_RATIO = 5;
const DURATION_MS = Number(process.env.FLEET_DURATION_MS ?? 5_000);
/** The `uniform-long` and `skewed-long` runs' length, at the largest N only. */
const LONG_MS = Number(process.env.FLEET_LONG_MS ?? 20_000);
const LONG = '-long';
const FLEET = (process.env.FLEET_N ?? '1,2,4,8,16,32').split(',').map(Number);
const SCENARIOS = (
  process.env.FLEET_SCENARIOS ??
  'uniform,skewed,bursty,warm,redis,stop,restart,uniform-long,skewed-long'
).split(',');
/** The fault runs: Redis stopped (SIGSTOP) or restarted from FAULT_AT_MS for FAULT_MS. */
const FAULT_AT_MS = 1_500;
const FAULT_MS = 2_000;
/** Round trips after this are also reported on their own (steady state). */
const WARM_UP_MS = 1_000;

const log = (message) => process.stderr.write(`[fleet] ${message}\n`);

/** Unpinned: the N workers need the cores as much as Redis does. */
const startRedis = (port) => startRedisServer(port, { pinned: false });

/** One command in RESP, its reply as text (enough for INFO and CONFIG RESETSTAT). */
function command(port, args) {
  return new Promise((resolve, reject) => {
    const socket = createConnection(port, '127.0.0.1');
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk;
      const bulk = /^\$(\d+)\r\n/.exec(out);
      if (
        out.startsWith('+') ||
        out.startsWith('-') ||
        (bulk && out.length >= bulk[0].length + Number(bulk[1]) + 2)
      ) {
        socket.end();
        resolve(out);
      }
    });
    socket.on('error', reject);
    socket.write(
      `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`,
    );
  });
}

/** SCRIPT LOAD of every script the stores send by SHA (EVALSHA finds them all from the first call). */
async function loadScripts(port) {
  const { SCRIPTS } = await import(BUILT_SCRIPTS);
  for (const script of Object.values(SCRIPTS)) {
    const sha = (await command(port, ['SCRIPT', 'LOAD', script.source])).trim();
    if (!sha.endsWith(script.sha)) throw new Error(`SCRIPT LOAD of ${script.name} answered ${sha}`);
  }
}

async function scriptCalls(port) {
  const info = await command(port, ['INFO', 'commandstats']);
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm))
    total += Number(match[2]);
  return total;
}

const nextMessage = (child, type) =>
  new Promise((resolve, reject) => {
    const onMessage = (message) => {
      if (message?.type !== type) return;
      child.off('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
    child.setMaxListeners(0);
  });

/**
 * Samples the hot bucket every SAMPLE_MS with a plain GET on its own
 * connection (not a script: not in the round-trip count) until `untilMs`:
 * the refill lost while it sat full (rate x time full) and its tokens when
 * the run ended. The under-admission's parts, with what close() gave back.
 */
const SAMPLE_MS = 5;
function sampleBucket(port, key, untilMs, durationMs) {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    let out = '';
    let askedAt = 0;
    let fullMs = 0;
    let lastAt;
    let lastTokens = BURST;
    const ask = () => {
      askedAt = Date.now();
      socket.write(`*2\r\n$3\r\nGET\r\n$${Buffer.byteLength(key)}\r\n${key}\r\n`);
    };
    const finish = () => {
      socket.destroy();
      resolve({ fullMs, endTokens: lastTokens, wastedTokens: (fullMs * RATE) / 1000 });
    };
    socket.on('error', finish);
    socket.on('data', (chunk) => {
      out += chunk;
      let raw;
      if (out.startsWith('$-1\r\n')) raw = null;
      else {
        const bulk = /^\$(\d+)\r\n/.exec(out);
        if (!bulk || out.length < bulk[0].length + Number(bulk[1]) + 2) return;
        raw = out.slice(bulk[0].length, bulk[0].length + Number(bulk[1]));
      }
      out = '';
      const tokens = tokensOf(raw, askedAt, RATE, BURST);
      if (lastAt !== undefined && lastTokens >= BURST - 0.5) fullMs += askedAt - lastAt;
      lastAt = askedAt;
      lastTokens = tokens;
      const wait = Math.min(SAMPLE_MS, untilMs - Date.now());
      if (wait <= 0) return finish();
      setTimeout(ask, wait);
    });
    socket.on('connect', () => setTimeout(ask, Math.max(0, untilMs - durationMs - Date.now())));
  });
}

async function main() {
  if (!existsSync(BUILT)) throw new Error('dist/ is missing: run `npm run build` first.');
  if (!existsSync(REDIS_SERVER)) throw new Error(`no redis-server at ${REDIS_SERVER}`);
  const port = await freePort();
  let redis = await startRedis(port);
  const env = { ...process.env, NODE_OPTIONS: '', REDIS_URL: `redis://127.0.0.1:${port}` };
  const size = Math.max(...FLEET);
  log(`starting ${size} worker processes`);
  const workers = [];
  for (let i = 0; i < size; i++) workers.push(fork(WORKER, [], { env, stdio: 'inherit' }));
  await Promise.all(workers.map((w) => nextMessage(w, 'ready')));
  const rows = [];
  let run = 0;
  try {
    for (const n of FLEET) {
      for (const scenario of SCENARIOS) {
        const long = scenario.endsWith(LONG);
        if (long && n !== size) continue;
        const store = scenario === 'redis' ? 'redis' : 'two-tier';
        const fault = scenario === 'stop' || scenario === 'restart' ? scenario : undefined;
        const traffic =
          scenario === 'redis' || fault
            ? 'uniform'
            : long
              ? scenario.slice(0, -LONG.length)
              : scenario;
        const durationMs = long ? LONG_MS : DURATION_MS;
        const settings = {
          store,
          scenario: traffic,
          prefix: `fleet${run++}:`,
          n,
          rate: RATE,
          burst: BURST,
          offeredRatio: OFFERED_RATIO,
          durationMs,
          timeoutMs: fault ? 250 : 1_000,
          failMode: 'local',
          warmRate: 500,
          // Fewer wake-ups when many processes share the cores: 32 x 100/s, not 32 x 500/s.
          tickMs: n >= 16 ? 10 : n >= 8 ? 4 : 2,
        };
        // Every worker builds its store and says so before the clock starts.
        const fleet = workers.slice(0, n);
        await Promise.all(
          fleet.map((worker, index) => {
            const armed = nextMessage(worker, 'armed');
            worker.send({ type: 'arm', run: { ...settings, index } });
            return armed;
          }),
        );
        // The store's scripts cached on the server before the clock starts (a fresh server after
        // the restart run has none): no run pays NOSCRIPT + EVAL per worker in its measured time.
        await loadScripts(port);
        await command(port, ['CONFIG', 'RESETSTAT']);
        const startAt = Date.now() + 100;
        settings.startAt = startAt;
        const results = fleet.map((worker) => {
          const done = nextMessage(worker, 'done');
          worker.send({ type: 'run', startAt });
          return done;
        });
        // The hot bucket's key: `<prefix>{hot}` (adapters/redis/redis-keys.ts).
        const sampled =
          store === 'two-tier' && !fault
            ? sampleBucket(port, `${settings.prefix}{hot}`, startAt + durationMs, durationMs)
            : undefined;
        let callsBefore = 0;
        let outageMs;
        // Calls made in the first second (first sightings, demand ramping up): reported apart.
        const warmUp = new Promise((r) => setTimeout(r, startAt + WARM_UP_MS - Date.now())).then(
          () => (fault ? 0 : scriptCalls(port)),
        );
        if (fault) {
          await new Promise((r) => setTimeout(r, startAt + FAULT_AT_MS - Date.now()));
          if (fault === 'stop') {
            redis.kill('SIGSTOP');
            await new Promise((r) => setTimeout(r, FAULT_MS));
            redis.kill('SIGCONT');
          } else {
            callsBefore = await scriptCalls(port);
            const exited = new Promise((r) => redis.once('exit', r));
            const killedAt = Date.now();
            redis.kill('SIGKILL');
            await exited;
            redis = await startRedis(port);
            // How long the server was gone: the D of the bound (the clients reconnect within 50 ms more).
            outageMs = Date.now() - killedAt;
          }
        }
        const done = await Promise.all(results);
        const bucket = await sampled;
        const callsAtWarmUp = await warmUp;
        const calls = callsBefore + (await scriptCalls(port));
        const row = analyse({
          n,
          scenario: long ? `${traffic}, ${durationMs / 1000} s` : scenario,
          store,
          fault,
          settings,
          done,
          calls,
          steadyCalls: fault ? undefined : calls - callsAtWarmUp,
          warmUpMs: WARM_UP_MS,
          faultAtMs: FAULT_AT_MS,
          faultMs: fault === 'restart' ? outageMs : FAULT_MS,
        });
        if (store === 'two-tier') {
          row.calls = sumCounts(done.map((d) => d.calls));
          const heldAtClose = done.reduce((t, d) => t + (d.heldAtClose ?? 0), 0);
          if (bucket)
            row.underAdmission = {
              short: row.bound - row.admitted,
              heldAtClose: Math.round(heldAtClose),
              bucketAtEnd: Math.round(bucket.endTokens),
              wastedWhileFull: Math.round(bucket.wastedTokens),
              fullMs: bucket.fullMs,
              shortBy: shortfallTimeline(done, settings),
            };
        }
        rows.push(row);
        log(JSON.stringify(row));
      }
    }
  } finally {
    for (const worker of workers) worker.send({ type: 'stop' });
    redis.kill('SIGCONT');
    redis.kill('SIGTERM');
  }
  printTable(rows);
  printBreakdown(rows);
  if (process.env.FLEET_WRITE === '1') {
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(
      `${RESULTS}fleet.json`,
      `${JSON.stringify({ date: new Date().toISOString(), rate: RATE, burst: BURST, offeredRatio: OFFERED_RATIO, durationMs: DURATION_MS, rows }, null, 2)}\n`,
    );
  }
}

function printTable(rows) {
  const header = [
    'N',
    'run',
    'admitted/bound (whole run)',
    'over the bound',
    'worst window excess (tokens)',
    'Redis round trips / admitted (whole run)',
    'same after the first second',
    'p99 ms',
    'errors',
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const r of rows)
    lines.push(
      `| ${[r.n, r.scenario, pct(r.admittedOverBound), r.over, r.windowExcess, r.roundTripsPerAdmitted.toFixed(3), r.steadyRoundTripsPerAdmitted?.toFixed(3) ?? '', r.p99Ms.toFixed(1), r.errors].join(' | ')} |`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Where the calls went and the under-admission's parts (stderr unless FLEET_BREAKDOWN=1: stdout). */
function printBreakdown(rows) {
  const lines = [];
  for (const r of rows) {
    if (!r.calls) continue;
    const kinds = Object.entries(r.calls)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, p]) => `${kind} ${p['first second']}/${p.after}/${p.close}`)
      .join(', ');
    const u = r.underAdmission;
    lines.push(
      `N=${r.n} ${r.scenario}: Redis calls (first second/after/close) ${kinds}` +
        (u
          ? `; under the bound by ${u.short}: held at close ${u.heldAtClose}, in the bucket at the end ${u.bucketAtEnd}, refill lost while full ${u.wastedWhileFull} (${u.fullMs} ms full); short of b + r·t by ${u.shortBy}`
          : '') +
        instanceSpread(r),
    );
  }
  (process.env.FLEET_BREAKDOWN === '1' ? process.stdout : process.stderr).write(
    `${lines.join('\n')}\n`,
  );
}

/** Admitted short of `b + r·t` at a few moments `t` of the run: where in time the under-admission sits. */
function shortfallTimeline(done, { rate, burst, durationMs }) {
  const times = done.flatMap((d) => d.times).sort((a, b) => a - b);
  const marks = [250, 500, 1000, 2000, durationMs].filter(
    (t, i, all) => t <= durationMs && all.indexOf(t) === i,
  );
  return marks
    .map((t) => {
      const admitted = times.filter((at) => at < t).length;
      return `${Math.round(burst + (rate * t) / 1000) - admitted} at ${t} ms`;
    })
    .join(', ');
}

/**
 * How evenly the instances admitted: min / median / max of their admissions
 * (the skewed run's heavy instance, index 0, apart), and those at zero.
 */
function instanceSpread(r) {
  const heavy = r.scenario.startsWith('skewed') && r.n > 1;
  const others = (heavy ? r.perInstance.slice(1) : r.perInstance).toSorted((a, b) => a - b);
  if (others.length < 2) return '';
  const median = others[Math.floor(others.length / 2)];
  const zero = others.filter((x) => x === 0).length;
  return (
    `; admitted per instance${heavy ? ` (heavy ${r.perInstance[0]}, the others)` : ''}: ` +
    `min ${others[0]}, median ${median}, max ${others.at(-1)}, ${zero} at 0`
  );
}

const pct = (x) => `${(100 * x).toFixed(1)} %`;

await main();
