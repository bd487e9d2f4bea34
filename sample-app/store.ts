import { MemoryStore, type RateLimitStore } from 'nestjs-holdup';

/** The store named by `RATE_LIMIT_STORE` (memory | redis | two-tier). */
export async function createStore(kind = process.env.RATE_LIMIT_STORE ?? 'memory'): Promise<RateLimitStore> {
  if (kind === 'memory') return new MemoryStore();
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  // ioredis is an optional dependency: loaded only when a Redis store is asked for.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined); // reconnects by itself; failures surface as store errors
  if (kind === 'redis') {
    const { RedisStore } = await import('nestjs-holdup/redis');
    return new RedisStore({ client });
  }
  throw new Error(`RATE_LIMIT_STORE must be memory or redis, got ${JSON.stringify(kind)}`);
}
