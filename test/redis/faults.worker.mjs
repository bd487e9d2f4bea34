// Plain-Node side of faults.e2e-spec.ts: a RedisStore on an ioredis client
// (options from the parent), hammered while the parent freezes and kills Redis.
// Runs outside jest so that `process.on('unhandledRejection')` is the real
// process' event (jest replaces those listeners with its own).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisStore } from '../../dist/esm/adapters/redis/index.js';

let unhandledRejections = 0;
let uncaughtExceptions = 0;
process.on('unhandledRejection', () => unhandledRejections++);
process.on('uncaughtException', () => uncaughtExceptions++);

const { REDIS_URL, KEY_PREFIX, TIMEOUT_MS, CLIENT_OPTIONS } = process.env;
const timeoutMs = Number(TIMEOUT_MS);
const client = new Redis(REDIS_URL, {
  retryStrategy: () => 50,
  lazyConnect: true,
  ...JSON.parse(CLIENT_OPTIONS),
});
client.on('error', () => {});
await client.connect();
const store = new RedisStore({
  client,
  keyPrefix: KEY_PREFIX,
  time: 'client',
  timeoutMs,
  expiryPaddingMs: 60_000,
});

let stopped = false;
let now = 0;
const calls = { answered: 0, storeErrors: 0, otherErrors: 0, slowestMs: 0 };

const loops = Array.from({ length: 3 }, async () => {
  while (!stopped) {
    const started = performance.now();
    try {
      await store.consume({
        checks: [
          { key: 'load', limit: { algorithm: 'token-bucket', rate: 1e6, burst: 1e6 }, cost: 1 },
        ],
        now: now++,
      });
      calls.answered++;
    } catch (error) {
      if (error?.name === 'RateLimitStoreError') calls.storeErrors++;
      else calls.otherErrors++;
    }
    calls.slowestMs = Math.max(calls.slowestMs, performance.now() - started);
    await sleep(5);
  }
});

process.once('message', async () => {
  stopped = true;
  await Promise.all(loops);
  // Recover by itself, then be exact on a fresh bucket.
  let recovered = false;
  for (let i = 0; i < 500 && !recovered; i++) {
    try {
      await store.peek({
        checks: [{ key: 'probe', limit: { algorithm: 'token-bucket', rate: 1, burst: 1 } }],
        now: 0,
      });
      recovered = true;
    } catch {
      await sleep(20);
    }
  }
  // Exactness through a patient store on the same client: on a loaded
  // machine a 100 ms call may time out yet be applied, which would make the
  // sequence unprovable. (The store under test recovering is shown above.)
  const patient = new RedisStore({
    client,
    keyPrefix: KEY_PREFIX,
    time: 'client',
    timeoutMs: 5_000,
  });
  const exact = [];
  for (let i = 0; i < 4; i++) {
    const { decisions } = await patient.consume({
      checks: [{ key: 'exact', limit: { algorithm: 'token-bucket', rate: 1, burst: 3 }, cost: 1 }],
      now: 10_000,
    });
    exact.push(decisions[0]);
  }
  // Late replies of frozen or resent commands have had time to arrive.
  await client.ping();
  await sleep(300);
  const summary = {
    type: 'done',
    ...calls,
    recovered,
    exact,
    timeouts: store.timeouts,
    errors: store.errors,
    scriptReloads: store.scriptReloads,
    unhandledRejections,
    uncaughtExceptions,
  };
  process.send(summary, () => {
    client.disconnect();
    process.disconnect();
    // No process.exit(): the process must end by itself (no timer or socket left holding it).
  });
});

process.send({ type: 'ready' });
