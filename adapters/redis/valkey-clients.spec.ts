/**
 * Portable scripts (issue 29) through the Valkey client packages, against
 * the redis-server the tests run (a dedicated one: SCRIPT FLUSH here must not
 * disturb other specs): `iovalkey` (an ioredis fork: taken as is) and Valkey
 * GLIDE (`@valkey/valkey-glide`, through the few lines of `RedisClient` its
 * `customCommand` needs). Each decides as ioredis does, counts a fleet, and
 * after SCRIPT FLUSH answers NOSCRIPT (GLIDE words it `NoScriptError`) with
 * one EVAL.
 */
import { GlideClient, Logger } from '@valkey/valkey-glide';
import { Valkey } from 'iovalkey';
import { check } from '../../test/utils/checks.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { RedisStore, type RedisClient } from './index.js';

/** A GLIDE client as a {@link RedisClient}: every command by `customCommand`. */
function glideAsRedisClient(glide: GlideClient): RedisClient {
  const send = (args: string[]) => glide.customCommand(args) as Promise<unknown>;
  return {
    evalsha: (sha, numkeys, ...args) => send(['EVALSHA', sha, String(numkeys), ...args]),
    eval: (script, numkeys, ...args) => send(['EVAL', script, String(numkeys), ...args]),
    del: (...keys) => send(['DEL', ...keys]),
    ping: () => send(['PING']),
  };
}

describe('RedisStore through the Valkey clients', () => {
  const redis = withRedisServer();
  const clients: {
    name: string;
    make: () => Promise<{ client: RedisClient; close: () => void }>;
  }[] = [
    {
      name: 'iovalkey',
      make: async () => {
        const valkey = new Valkey(redis.server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
        await valkey.connect();
        return { client: valkey as unknown as RedisClient, close: () => valkey.disconnect() };
      },
    },
    {
      name: 'Valkey GLIDE',
      make: async () => {
        // GLIDE logs each error reply (the NOSCRIPT below) at WARN by default.
        Logger.setLoggerConfig('off');
        const glide = await GlideClient.createClient({
          addresses: [{ host: '127.0.0.1', port: redis.server.port }],
          requestTimeout: 2_000,
        });
        return { client: glideAsRedisClient(glide), close: () => glide.close() };
      },
    },
  ];

  it.each(clients)(
    '$name: decides, leases with a fleet count, and falls back to EVAL after SCRIPT FLUSH',
    async ({ make }) => {
      const { client, close } = await make();
      const store = new RedisStore({ client, keyPrefix: uniquePrefix('valkey'), ...ON_TEST_CLOCK });
      try {
        const first = await store.consume({ checks: [check('k', 10, 2)], now: 0 });
        expect(first.decisions[0]).toMatchObject({ allowed: true, remaining: 1 });
        await store.consume({ checks: [check('k', 10, 2)], now: 0 });
        const denied = await store.consume({ checks: [check('k', 10, 2)], now: 0 });
        expect(denied.decisions[0]).toMatchObject({ allowed: false, retryAfterMs: 100 });

        const leased = await store.lease({
          checks: [{ ...check('hot', 100, 100), maxExtra: 10 }],
          now: 0,
          // The fleet set expires a window after its last write, in real time (padding does not
          // reach it): a minute, not a second, so that a stall before 'two' does not drop 'one'.
          fleet: { id: 'one', windowMs: 60_000 },
        });
        expect(leased).toMatchObject({ allowed: true, extras: [10], instances: [1] });

        await redis.client.script('FLUSH');
        const reloadsBefore = store.scriptReloads;
        const again = await store.lease({
          checks: [{ ...check('hot', 100, 100), maxExtra: 10 }],
          now: 0,
          fleet: { id: 'two', windowMs: 60_000 },
        });
        expect(again).toMatchObject({ allowed: true, extras: [10], instances: [2] });
        expect(store.scriptReloads).toBe(reloadsBefore + 1);
        // Cached again by the EVAL: the next lease goes by SHA.
        await store.lease({ checks: [{ ...check('hot', 100, 100), maxExtra: 1 }], now: 0 });
        expect(store.scriptReloads).toBe(reloadsBefore + 1);
      } finally {
        store.close();
        close();
      }
    },
  );
});
