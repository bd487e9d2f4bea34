// One of the processes of multi-process.e2e-spec.ts: its own ioredis client
// and TwoTierStore (Redis server time; or a RedisStore with STORE=redis, for
// comparison), offering one hot key a steady load (OFFER requests per
// second) when told to go.
// Plain JavaScript against the built package: child processes cannot load
// TypeScript (`npm test` builds first).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisStore } from '../../dist/esm/adapters/redis/index.js';
import { TwoTierStore } from '../../dist/esm/adapters/two-tier/index.js';

const { REDIS_URL, CLIENT_OPTIONS, KEY_PREFIX, RATE, BURST, OFFER, INSTANCES, KEY, STORE } =
  process.env;
const rate = Number(RATE);
const burst = Number(BURST);
const offerPerMs = Number(OFFER) / 1000;

// CLIENT_OPTIONS: the parent's option set (test/utils/redis-client.ts), as JSON.
const client = new Redis(REDIS_URL, { ...JSON.parse(CLIENT_OPTIONS), lazyConnect: true });
await client.connect();
// A generous timeout: this test measures accuracy and Redis calls, not latency, on a loaded machine.
const store =
  STORE === 'redis'
    ? new RedisStore({ client, keyPrefix: KEY_PREFIX, timeoutMs: 5_000 })
    : new TwoTierStore({
        client,
        keyPrefix: KEY_PREFIX,
        timeoutMs: 5_000,
        instances: Number(INSTANCES),
      });
const statsOf = () => (store instanceof RedisStore ? { redisCalls: store.calls } : store.stats());
const check = { key: KEY ?? 'hot', limit: { algorithm: 'token-bucket', rate, burst }, cost: 1 };

const serverMs = async () => {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Number(micros) / 1000;
};

process.once('message', async ({ durationMs }) => {
  let offered = 0;
  let admitted = 0;
  let denied = 0;
  let errors = 0;
  let sync = 0;
  let slowestMs = 0;
  const inFlight = new Set();
  const count = (result) => (result.allowed ? admitted++ : denied++);
  const startMs = await serverMs();
  const started = performance.now();
  const deadline = started + durationMs;
  while (performance.now() < deadline) {
    const due = Math.floor((performance.now() - started) * offerPerMs);
    while (offered < due) {
      offered++;
      const asked = performance.now();
      let answer;
      try {
        answer = store.consume({ checks: [check], now: Date.now() });
      } catch {
        errors++;
        continue;
      }
      if (typeof answer?.then !== 'function') {
        sync++;
        count(answer);
        continue;
      }
      const pending = answer
        .then(count, () => errors++)
        .finally(() => {
          slowestMs = Math.max(slowestMs, performance.now() - asked);
          inFlight.delete(pending);
        });
      inFlight.add(pending);
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  const endMs = await serverMs();
  const stats = statsOf();
  await store.close();
  const afterClose = statsOf();
  process.send(
    {
      type: 'done',
      offered,
      admitted,
      denied,
      errors,
      sync,
      slowestMs,
      startMs,
      endMs,
      stats,
      returnedAtClose: afterClose.returnedTokens - stats.returnedTokens,
      afterClose,
    },
    () => {
      client.disconnect();
      process.disconnect();
    },
  );
});

process.send({ type: 'ready' });
