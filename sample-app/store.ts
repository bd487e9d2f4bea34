import { MemoryStore, type RateLimitStore } from 'nestjs-holdup';

/**
 * The store named by `RATE_LIMIT_STORE` (memory | redis | two-tier), with
 * `REDIS_URL` and an optional `RATE_LIMIT_KEY_PREFIX` for the Redis ones.
 */
export async function createStore(
  kind = process.env.RATE_LIMIT_STORE ?? 'memory',
): Promise<RateLimitStore> {
  if (kind === 'memory') return new MemoryStore();
  if (kind !== 'redis' && kind !== 'two-tier') {
    throw new Error(
      `RATE_LIMIT_STORE must be memory, redis or two-tier, got ${JSON.stringify(kind)}`,
    );
  }
  // ioredis is an optional dependency: loaded only when a Redis store is asked for.
  const { Redis } = await import('ioredis');
  // No offline queue: a command queued while Redis is away would be replayed
  // (and charged) after it returns; the store fails fast instead and the
  // module's failMode decides.
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  client.on('error', () => undefined); // ioredis reconnects by itself; failures surface as store errors
  // Until the client is connected the store fails fast (and failMode admits):
  // give it a moment at start-up, but start anyway if Redis is down.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2000).unref();
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const keyPrefix = process.env.RATE_LIMIT_KEY_PREFIX;
  const store = await createRedisBackedStore(kind, client, keyPrefix);
  // This app created the client, so it closes it with the store (a store
  // never closes a client it was given).
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await client.quit().catch(() => client.disconnect());
  };
  return store;
}

async function createRedisBackedStore(
  kind: 'redis' | 'two-tier',
  client: import('ioredis').Redis,
  keyPrefix: string | undefined,
): Promise<RateLimitStore> {
  if (kind === 'redis') {
    const { RedisStore } = await import('nestjs-holdup/redis');
    return new RedisStore({ client, keyPrefix });
  }
  const { TwoTierStore } = await import('nestjs-holdup/two-tier');
  // RATE_LIMIT_INSTANCES: how many copies of the app share Redis (the local
  // fallback enforces 1/instances of each limit while Redis is down).
  const instances = Number(process.env.RATE_LIMIT_INSTANCES ?? 1);
  return new TwoTierStore({ client, keyPrefix, instances });
}
