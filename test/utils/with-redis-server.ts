/**
 * A redis-server of the suite's own (the harness', see redis-harness.ts) and
 * a connected client, for the specs that break, count or reconfigure their
 * server and so cannot use the shared one:
 *
 * ```ts
 * const redis = withRedisServer({ client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 50 } });
 * it('…', async () => {
 *   const store = new RedisStore({ client: redis.client });
 *   await redis.server.kill();
 * });
 * ```
 *
 * Started in `beforeAll` and stopped in `afterAll`, or around every test with
 * `each: true`. Teardown disconnects the client, then stops the server (a
 * frozen one is resumed first). Jest runs the after-hooks of nested blocks
 * first, and those of one block in the order they were declared: what must
 * end before the server does (an application using the client) goes in
 * `beforeStop`, or in a nested block.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals';
import type { Redis, RedisOptions } from 'ioredis';
import { connectRedisClient, RECOMMENDED_OPTIONS } from './redis-client.js';
import {
  startRedisServer,
  type RedisServer,
  type StartRedisServerOptions,
} from './redis-harness.js';

export interface WithRedisServerOptions {
  /** A server (and client) per test instead of one for the block. */
  readonly each?: boolean;
  /**
   * The client's options, or `false` for the server alone (specs whose
   * clients live in other processes). @default RECOMMENDED_OPTIONS
   */
  readonly client?: RedisOptions | false;
  /** Ignore the client's `error` events (for specs that kill or freeze the server). @default false */
  readonly quietErrors?: boolean;
  readonly server?: StartRedisServerOptions;
  /**
   * Runs first at teardown, while the server is still up (e.g. closing the
   * application that uses the client, killing a worker process); the client
   * and the server are stopped even if it throws.
   */
  readonly beforeStop?: () => unknown;
}

export interface RedisServerFixture {
  /** The running server (throws outside a test or hook of the block). */
  readonly server: RedisServer;
  /** The connected client (throws with `client: false`). */
  readonly client: Redis;
}

export function withRedisServer(options: WithRedisServerOptions = {}): RedisServerFixture {
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  const start = async () => {
    server = await startRedisServer(options.server);
    if (options.client === false) return;
    client = await connectRedisClient(server.url, options.client ?? RECOMMENDED_OPTIONS);
    if (options.quietErrors) client.on('error', () => undefined);
  };
  const stop = async () => {
    try {
      await options.beforeStop?.();
    } finally {
      client?.disconnect();
      client = undefined;
      if (server) {
        try {
          server.resume();
        } catch {
          // already gone (killed by the test)
        }
        await server.stop();
      }
      server = undefined;
    }
  };
  if (options.each) {
    beforeEach(start);
    afterEach(stop);
  } else {
    beforeAll(start);
    afterAll(stop);
  }
  const running = <T>(value: T | undefined, what: string): T => {
    if (value === undefined)
      throw new Error(`withRedisServer(): no ${what} outside the tests and hooks of its block`);
    return value;
  };
  return {
    get server() {
      return running(server, 'server');
    },
    get client() {
      if (options.client === false)
        throw new Error('withRedisServer(): no client with { client: false }');
      return running(client, 'client');
    },
  };
}
