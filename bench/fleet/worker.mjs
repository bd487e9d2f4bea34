// One instance of the fleet benchmark (bench/fleet/run.mjs): its own ioredis
// client, and for each run its own TwoTierStore or RedisStore, offering a
// hot key (and, in the `warm` scenario, 10k warm keys) the load the parent
// describes. Answers each request's admission time and latency.
// Plain JavaScript against the built package (`npm run build` first).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisStore } from '../../dist/esm/adapters/redis/index.js';
import { TwoTierStore } from '../../dist/esm/adapters/two-tier/index.js';
import { countCalls } from './breakdown.mjs';

const client = new Redis(process.env.REDIS_URL, {
  lazyConnect: true,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  retryStrategy: () => 50,
});
client.on('error', () => {}); // the stores report what matters; a stopped server is part of the test
await client.connect();

const WARM_KEYS = 10_000;
/** Offer per ms of instance `index` of `n`, `t` ms into the run. */
function offerPerMs(run, t) {
  const total = (run.offeredRatio * run.rate) / 1000;
  const { index, n, scenario } = run;
  if (scenario === 'skewed' && n > 1) return index === 0 ? 0.8 * total : (0.2 * total) / (n - 1);
  // Bursty: 4x the mean during the first quarter of every second, nothing in the rest.
  if (scenario === 'bursty') return t % 1000 < 250 ? (4 * total) / n : 0;
  return total / n;
}

/** The store of the next run, built before the parent starts the clock (`arm`). */
function buildStore(run) {
  return run.store === 'redis'
    ? new RedisStore({ client, keyPrefix: run.prefix, timeoutMs: run.timeoutMs })
    : new TwoTierStore({
        client,
        keyPrefix: run.prefix,
        timeoutMs: run.timeoutMs,
        instances: run.n,
      });
}

async function runOnce(run, store) {
  const calls = store instanceof TwoTierStore ? countCalls(store, run.startAt) : undefined;
  const hot = {
    key: 'hot',
    limit: { algorithm: 'token-bucket', rate: run.rate, burst: run.burst },
    cost: 1,
  };
  const warmLimit = { algorithm: 'token-bucket', rate: 10, burst: 10 };
  // Hot key admissions, each at the `now` its request was stamped with (what the store decides
  // on): ms since the run's start, one clock (Date.now(): the machine's, shared by the processes).
  const times = [];
  const latencies = [];
  let offered = 0;
  let denied = 0;
  let errors = 0;
  let local = 0;
  let warmOffered = 0;
  let warmAdmitted = 0;
  const inFlight = new Set();
  const decideLocally = (request) => {
    // failMode 'local': the store's own fallback decides (its local share of the limit).
    local++;
    return store.localFallback.consumeLocally(request);
  };
  const admit = (request, asked, warm) => (result) => {
    latencies.push(performance.now() - asked);
    if (warm) {
      if (result.allowed) warmAdmitted++;
      return;
    }
    if (result.allowed) times.push(request.now - run.startAt);
    else denied++;
  };
  const consume = (request, warm) => {
    const asked = performance.now();
    const done = admit(request, asked, warm);
    let answer;
    try {
      answer = store.consume(request);
    } catch {
      errors++;
      return;
    }
    if (typeof answer?.then !== 'function') return done(answer);
    const pending = answer
      .then(done, () => {
        errors++;
        if (run.failMode === 'local' && store.localFallback) done(decideLocally(request));
        else if (!warm) denied++;
      })
      .finally(() => inFlight.delete(pending));
    inFlight.add(pending);
  };

  while (Date.now() < run.startAt) await sleep(1);
  const started = performance.now();
  let due = 0;
  let warmDue = 0;
  let last = 0;
  for (;;) {
    const t = performance.now() - started;
    if (t >= run.durationMs) break;
    due += offerPerMs(run, t) * (t - last);
    if (run.scenario === 'warm') warmDue += ((run.warmRate / 1000) * (t - last)) / run.n;
    last = t;
    const stamp = Date.now();
    while (offered < Math.floor(due)) {
      offered++;
      consume({ checks: [hot], now: stamp }, false);
    }
    while (warmOffered < Math.floor(warmDue)) {
      warmOffered++;
      const key = `w${Math.floor(Math.random() * WARM_KEYS)}`;
      consume({ checks: [{ key, limit: warmLimit, cost: 1 }], now: stamp }, true);
    }
    await sleep(run.tickMs);
  }
  await Promise.all(inFlight);
  const stats = store instanceof RedisStore ? { redisCalls: store.calls } : store.stats();
  calls?.closing();
  await store.close();
  // What close() gave back: the tokens this instance still held when the run ended.
  const heldAtClose =
    store instanceof TwoTierStore ? store.stats().returnedTokens - stats.returnedTokens : 0;
  return {
    offered,
    admitted: times.length,
    denied,
    errors,
    local,
    warmOffered,
    warmAdmitted,
    times,
    latencies,
    stats,
    heldAtClose,
    calls: calls?.counts(),
  };
}

let armed;
process.on('message', async (message) => {
  if (message.type === 'stop') {
    client.disconnect();
    process.disconnect();
    return;
  }
  if (message.type === 'arm') {
    // Store built (and its first lazy work done) before the clock starts.
    armed = { run: message.run, store: buildStore(message.run) };
    process.send({ type: 'armed' });
    return;
  }
  const { run, store } = armed;
  armed = undefined;
  const result = await runOnce({ ...run, startAt: message.startAt }, store);
  process.send({ type: 'done', ...result });
});
process.send({ type: 'ready' });
