/**
 * Every ioredis client of the TypeScript specs is built here. The `.mjs`
 * workers run under plain Node, which cannot import TypeScript: they build
 * their own client, from the option set their parent spec passes them as
 * JSON (`CLIENT_OPTIONS`).
 *
 * Not imported by redis-harness.ts, which jest's globalSetup loads outside
 * the module mapper (see global-setup.ts).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { sharedRedisUrl, type RedisClusterHandle } from './redis-harness.js';

/**
 * What README recommends for a rate limiter's client: a decision is never
 * queued while disconnected, retried, or resent after a reconnect, to be
 * charged again for a request answered long ago.
 */
export const RECOMMENDED_OPTIONS: Readonly<RedisOptions> = Object.freeze({
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  autoResendUnfulfilledCommands: false,
});

/**
 * A client with exactly `options` (ioredis defaults for everything else). It
 * connects in the background, unless `lazyConnect`.
 */
export function createRedisClient(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, options);
}

/**
 * A client with `options` (the recommended ones unless given), connected:
 * resolves once it is ready, rejects when the server does not answer.
 */
export async function connectRedisClient(
  url: string,
  options: RedisOptions = RECOMMENDED_OPTIONS,
): Promise<Redis> {
  const client = new Redis(url, { ...options, lazyConnect: true });
  await client.connect();
  return client;
}

/** A connected client on the harness' shared server (REDIS_URL), with the recommended options. */
export function connectSharedClient(): Promise<Redis> {
  return connectRedisClient(sharedRedisUrl());
}

/** An ioredis Cluster client on the harness' cluster, once it is ready. */
export async function connectClusterClient(cluster: RedisClusterHandle): Promise<Cluster> {
  const client = new Cluster([...cluster.startupNodes], {
    enableOfflineQueue: true, // only until ready; the store itself never sends while not ready
    redisOptions: { maxRetriesPerRequest: 1 },
  });
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve());
    client.once('error', reject);
  });
  return client;
}
