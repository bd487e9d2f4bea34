// One of the processes of acquire-processes.e2e-spec.ts: its own ioredis
// client, RedisStore (server time) and RateLimiter, calling acquire() in
// loops until told to stop, like a client of a rate-limited partner API.
// Plain JavaScript against the built package (`npm test` builds first).
import { Redis } from 'ioredis';
import { RateLimiter, systemClock } from '../../dist/esm/lib/index.js';
import { RedisStore } from '../../dist/esm/adapters/redis/index.js';

const { REDIS_URL, CLIENT_OPTIONS, KEY_PREFIX, RATE, BURST, CONCURRENCY } = process.env;
const client = new Redis(REDIS_URL, { ...JSON.parse(CLIENT_OPTIONS), lazyConnect: true });
await client.connect();
const store = new RedisStore({ client, keyPrefix: KEY_PREFIX, timeoutMs: 5_000 });
const limiter = new RateLimiter(store, systemClock, {
  failMode: 'closed',
  ipv6Subnet: 64,
  errorFormat: 'nest',
});
const limit = { name: 'partner', rate: Number(RATE), burst: Number(BURST) };

process.once('message', async ({ durationMs }) => {
  const resolvedAt = [];
  let errors = 0;
  const deadline = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: Number(CONCURRENCY) }, async () => {
      while (performance.now() < deadline) {
        try {
          await limiter.acquire('api', limit, { maxWaitMs: 10_000 });
          resolvedAt.push(Date.now());
        } catch {
          errors++;
        }
      }
    }),
  );
  process.send({ type: 'done', resolvedAt, errors }, () => {
    client.disconnect();
    process.disconnect();
  });
});

process.send({ type: 'ready' });
