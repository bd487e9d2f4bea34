// One of the processes of multi-process.e2e-spec.ts: its own ioredis client
// and RedisStore (server time), hammering one key when told to go.
// Plain JavaScript against the built package: child processes cannot load
// TypeScript (`npm test` builds first).
import { Redis } from 'ioredis';
import { RedisStore } from '../../dist/esm/adapters/redis/index.js';

const { REDIS_URL, CLIENT_OPTIONS, KEY_PREFIX, RATE, BURST, CONCURRENCY } = process.env;
const rate = Number(RATE);
const burst = Number(BURST);

// CLIENT_OPTIONS: the parent's option set (test/utils/redis-client.ts), as JSON.
const client = new Redis(REDIS_URL, { ...JSON.parse(CLIENT_OPTIONS), lazyConnect: true });
await client.connect();
// A generous timeout: this test measures accuracy, not latency, on a loaded machine.
const store = new RedisStore({ client, keyPrefix: KEY_PREFIX, timeoutMs: 5_000 });
const check = { key: 'hot', limit: { algorithm: 'token-bucket', rate, burst }, cost: 1 };

const serverMs = async () => {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Number(micros) / 1000;
};

process.once('message', async ({ durationMs }) => {
  let admitted = 0;
  let denied = 0;
  let errors = 0;
  const startMs = await serverMs();
  const deadline = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: Number(CONCURRENCY) }, async () => {
      while (performance.now() < deadline) {
        try {
          const result = await store.consume({ checks: [check], now: Date.now() });
          if (result.allowed) admitted++;
          else denied++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const endMs = await serverMs();
  process.send({ type: 'done', admitted, denied, errors, startMs, endMs }, () => {
    client.disconnect();
    process.disconnect();
  });
});

process.send({ type: 'ready' });
