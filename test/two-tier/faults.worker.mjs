// Plain-Node side of faults.e2e-spec.ts: a TwoTierStore on an ioredis client
// (options from the parent), under steady load while the parent kills,
// restarts, freezes and thaws Redis. Runs outside jest so that
// `process.on('unhandledRejection')` is the real process' event (jest
// replaces those listeners with its own).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { TwoTierStore } from '../../dist/esm/adapters/two-tier/index.js';

let unhandledRejections = 0;
let uncaughtExceptions = 0;
process.on('unhandledRejection', () => unhandledRejections++);
process.on('uncaughtException', () => uncaughtExceptions++);

const { REDIS_URL, KEY_PREFIX, TIMEOUT_MS, CLIENT_OPTIONS, FAIL_MODE } = process.env;
const client = new Redis(REDIS_URL, {
  retryStrategy: () => 50,
  lazyConnect: true,
  ...JSON.parse(CLIENT_OPTIONS),
});
client.on('error', () => {});
await client.connect();
const store = new TwoTierStore({
  client,
  keyPrefix: KEY_PREFIX,
  timeoutMs: Number(TIMEOUT_MS),
  instances: 2,
});

const LIMIT = { algorithm: 'token-bucket', rate: 500, burst: 500 };

/** The store call as the module makes it for FAIL_MODE (RateLimiter.evaluate): 'local' falls back to the local tier. */
function consume(request) {
  if (FAIL_MODE !== 'local') return store.consume(request);
  const local = store.localFallback;
  if (local.active) return local.consumeLocally(request);
  const answer = store.consume(request);
  return typeof answer?.then === 'function'
    ? answer.catch(() => local.consumeLocally(request))
    : answer;
}

let stopped = false;
const calls = { answered: 0, admitted: 0, sync: 0, storeErrors: 0, otherErrors: 0, slowestMs: 0 };
/** [wall-clock ms, degraded] at every change seen. */
const transitions = [];
let coldKey = 0;

const loops = Array.from({ length: 3 }, (_, loop) =>
  (async () => {
    while (!stopped) {
      // Two hot keys (leases) and a stream of cold ones (one Redis call each).
      const key = loop === 2 ? `cold:${coldKey++}` : `hot:${loop}`;
      const started = performance.now();
      try {
        const answer = consume({ checks: [{ key, limit: LIMIT, cost: 1 }], now: Date.now() });
        if (typeof answer?.then !== 'function') calls.sync++;
        const result = await answer;
        calls.answered++;
        if (result.allowed) calls.admitted++;
      } catch (error) {
        if (error?.name === 'RateLimitStoreError') calls.storeErrors++;
        else calls.otherErrors++;
      }
      calls.slowestMs = Math.max(calls.slowestMs, performance.now() - started);
      await sleep(2);
    }
  })(),
);

let last = store.degraded;
const watcher = setInterval(() => {
  if (store.degraded !== last) {
    last = store.degraded;
    transitions.push([Date.now(), last]);
  }
}, 1);

process.once('message', async () => {
  stopped = true;
  await Promise.all(loops);
  clearInterval(watcher);
  const stats = store.stats();
  await store.close();
  // Late replies of frozen or resent commands have had time to arrive.
  await sleep(300);
  process.send(
    { type: 'done', ...calls, transitions, stats, unhandledRejections, uncaughtExceptions },
    () => {
      client.disconnect();
      process.disconnect();
      // No process.exit(): the process must end by itself (no timer or socket left holding it).
    },
  );
});

process.send({ type: 'ready' });
