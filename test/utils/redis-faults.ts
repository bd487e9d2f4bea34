/**
 * What the specs that break their own Redis under a running application
 * share (test/reliability/script-faults, slot-stall-faults, slot-kill-faults):
 *
 * - {@link withFaultyRedis}: a redis-server of the block's own
 *   ({@link withRedisServer}), the store's client reconnecting every 30 ms
 *   and an admin client beside it (both deaf to `error` events: the server
 *   is killed, frozen or refusing writes on purpose), and the unhandled
 *   rejections of the block collected (a failure the specs look for);
 * - {@link slotsHeldInRedis}: the concurrency slots a prefix holds in Redis;
 * - {@link statusOf}: one HTTP GET, its status (0 when the connection failed).
 */
import http from 'node:http';
import { afterAll, beforeAll } from '@jest/globals';
import type { Redis } from 'ioredis';
import { connectRedisClient, RECOMMENDED_OPTIONS } from './redis-client.js';
import type { RedisServer } from './redis-harness.js';
import { withRedisServer } from './with-redis-server.js';

export interface FaultyRedis {
  readonly server: RedisServer;
  /** The store's client: README's options, reconnecting every 30 ms. */
  readonly client: Redis;
  /** A second client, to inspect (and misconfigure) the server beside the store's. */
  readonly admin: Redis;
  /** Unhandled rejections seen while the block ran. */
  readonly unhandled: readonly unknown[];
}

/**
 * In a `describe` block: the server and clients, started in `beforeAll`.
 * `beforeStop` runs first at teardown (close the application there), after
 * the server is resumed should a test have left it frozen.
 */
export function withFaultyRedis(options: { beforeStop?: () => unknown } = {}): FaultyRedis {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  let admin: Redis | undefined;
  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled);
  });
  const redis = withRedisServer({
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 30 },
    quietErrors: true,
    beforeStop: async () => {
      try {
        redis.server.resume();
        await options.beforeStop?.();
      } finally {
        admin?.disconnect();
        admin = undefined;
      }
    },
  });
  beforeAll(async () => {
    admin = await connectRedisClient(redis.server.url, { retryStrategy: () => 30 });
    admin.on('error', () => undefined);
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });
  return {
    get server() {
      return redis.server;
    },
    get client() {
      return redis.client;
    },
    get admin() {
      if (admin === undefined)
        throw new Error('withFaultyRedis(): no admin client outside its block');
      return admin;
    },
    unhandled,
  };
}

/**
 * Slots held in Redis under `keyPrefix`: members of the slot sets (not the
 * released-id sets beside them) whose lease has not run out, by the
 * server's clock. `include` narrows the keys (a caller's).
 */
export async function slotsHeldInRedis(
  client: Redis,
  keyPrefix: string,
  include: (key: string) => boolean = () => true,
): Promise<number> {
  const keys = (await client.keys(`${keyPrefix}*`)).filter(
    (key) => !key.endsWith(':released') && include(key),
  );
  const now = Number((await client.time())[0]) * 1000;
  let count = 0;
  for (const key of keys) {
    if ((await client.type(key)) === 'zset') count += await client.zcount(key, `(${now}`, '+inf');
  }
  return count;
}

/** GET `path` on 127.0.0.1:`port` with an `x-api-key`; its status, 0 when the connection failed. */
export function statusOf(
  port: number,
  path: string,
  apiKey: string,
  agent: http.Agent | false,
): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, headers: { 'x-api-key': apiKey }, agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', () => resolve(0));
    req.end();
  });
}
