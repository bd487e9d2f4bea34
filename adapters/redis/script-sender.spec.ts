/**
 * How the store sends its scripts on ioredis' standalone client
 * (`script-sender.ts`): the calls of one tick leave in one write (the socket
 * corked until the tick ends), never through ioredis' auto-pipelining, with
 * the client's own key prefix; other clients get their own `evalsha`.
 */
import type { Redis } from 'ioredis';
import { createRedisClient, connectRedisClient } from '../../test/utils/redis-client.js';
import { sharedRedisUrl, uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { check } from '../../test/utils/checks.js';
import { RedisStore, type RedisClient } from './index.js';
import { redisKey } from './redis-keys.js';
import { scriptSender } from './script-sender.js';

const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));
/**
 * Two checks: one call of the general consume script, which the sender
 * writes as it is (one-bucket consumes made while others await their
 * replies go in one batch script call instead: script-batch.spec.ts).
 */
const pair = (key: string) => [check(`${key}-a`, 10, 10), check(`${key}-b`, 10, 10)];

describe('script-sender on ioredis', () => {
  const clients: Redis[] = [];
  const connect = async (options: Parameters<typeof connectRedisClient>[1] = {}) => {
    const client = await connectRedisClient(sharedRedisUrl(), {
      maxRetriesPerRequest: 1,
      ...options,
    });
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });

  it('writes the script calls of one tick together: the socket is corked until the tick ends', async () => {
    const client = await connect();
    const store = new RedisStore({
      client,
      keyPrefix: uniquePrefix('sender-cork'),
      time: 'client',
      timeoutMs: 5_000,
    });
    const stream = client.stream as unknown as { writableCorked: number; writableLength: number };
    expect(stream.writableCorked).toBe(0);
    const calls = Array.from({ length: 10 }, (_, i) =>
      store.consume({ checks: pair(`k${i}`), now: 0 }),
    );
    // The first left at once (see below); the nine behind it wait in the corked socket.
    expect(stream.writableCorked).toBe(1);
    expect(stream.writableLength).toBeGreaterThan(0);
    await nextTick();
    expect(stream.writableCorked).toBe(0);
    const results = await Promise.all(calls);
    expect(results.every((result) => result.allowed)).toBe(true);
    store.close();
  });

  it('lets a batch leave as soon as it is full (a quarter of the commands awaiting replies, at least 4), so Redis starts on it while the tick goes on', async () => {
    const client = await connect();
    const store = new RedisStore({
      client,
      keyPrefix: uniquePrefix('sender-batch'),
      time: 'client',
      timeoutMs: 5_000,
    });
    const stream = client.stream as unknown as { writableCorked: number };
    const calls = [];
    // The first call of an idle connection leaves alone; the next three start a batch.
    for (let i = 0; i < 4; i++) calls.push(store.consume({ checks: pair(`k${i}`), now: 0 }));
    expect(stream.writableCorked).toBe(1);
    // The fifth fills the batch (4: few commands awaiting replies): written at once.
    calls.push(store.consume({ checks: pair('k4'), now: 0 }));
    expect(stream.writableCorked).toBe(0);
    // The next call starts the next batch.
    calls.push(store.consume({ checks: pair('k5'), now: 0 }));
    expect(stream.writableCorked).toBe(1);
    expect((await Promise.all(calls)).every((result) => result.allowed)).toBe(true);
    store.close();
  });

  it('never holds a lone call: on an idle connection a call is written at once, not corked until the tick ends', async () => {
    const client = await connect();
    const store = new RedisStore({
      client,
      keyPrefix: uniquePrefix('sender-lone'),
      time: 'client',
      timeoutMs: 5_000,
    });
    const stream = client.stream as unknown as { writableCorked: number; writableLength: number };
    for (let i = 0; i < 3; i++) {
      // One request at a time: each finds nothing awaiting a reply.
      const call = store.consume({ checks: pair(`k${i}`), now: 0 });
      expect(stream.writableCorked).toBe(0);
      expect(stream.writableLength).toBe(0);
      expect((await call).allowed).toBe(true);
    }
    store.close();
  });

  it('bypasses auto-pipelining (each call its own command, not held behind a pipeline), and gets the same answers', async () => {
    const client = await connect({ enableAutoPipelining: true });
    const store = new RedisStore({
      client,
      keyPrefix: uniquePrefix('sender-ap'),
      time: 'client',
      timeoutMs: 5_000,
    });
    const consumed = store.consume({ checks: [check('k', 10, 10, 3)], now: 0 });
    expect(client.autoPipelineQueueSize).toBe(0);
    // What the client's own evalsha does with auto-pipelining on (the check above can fail).
    const ping = client
      .evalsha('0000000000000000000000000000000000000000', 0)
      .catch((error: Error) => error.message);
    expect(client.autoPipelineQueueSize).toBe(1);
    expect(await consumed).toMatchObject({ allowed: true, decisions: [{ remaining: 7 }] });
    expect(await ping).toMatch(/NOSCRIPT/);
    store.close();
  });

  it("keeps the client's keyPrefix, as its evalsha would", async () => {
    const clientPrefix = uniquePrefix('client-prefix');
    const client = await connect({ keyPrefix: clientPrefix });
    const plain = await connect();
    const keyPrefix = uniquePrefix('sender-prefix');
    const store = new RedisStore({ client, keyPrefix, ...ON_TEST_CLOCK });
    await store.consume({ checks: [check('k', 10, 10)], now: 0 });
    expect(await plain.exists(clientPrefix + redisKey(keyPrefix, 'k'))).toBe(1);
    expect(await plain.exists(redisKey(keyPrefix, 'k'))).toBe(0);
    store.close();
  });

  it('does not cork a client that is not connected yet (its commands wait in the offline queue)', async () => {
    const client = createRedisClient(sharedRedisUrl(), {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    clients.push(client);
    const send = scriptSender(client);
    const reply = send('0000000000000000000000000000000000000000', 0, []).catch(
      (error: Error) => error.message,
    );
    expect(client.stream).toBeUndefined();
    expect(await reply).toMatch(/NOSCRIPT/);
  });

  it('corks the socket of a client that connected after the store was created (as in an application)', async () => {
    const client = createRedisClient(sharedRedisUrl(), {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    clients.push(client);
    const store = new RedisStore({
      client,
      keyPrefix: uniquePrefix('sender-late'),
      time: 'client',
      timeoutMs: 5_000,
    });
    await client.connect();
    const stream = client.stream as unknown as { writableCorked: number };
    const calls = Array.from({ length: 3 }, (_, i) =>
      store.consume({ checks: pair(`k${i}`), now: 0 }),
    );
    expect(stream.writableCorked).toBe(1);
    expect((await Promise.all(calls)).every((result) => result.allowed)).toBe(true);
    store.close();
  });

  it("uses another client's own evalsha", async () => {
    const seen: unknown[][] = [];
    const client: RedisClient = {
      evalsha: (...args) => {
        seen.push(args);
        return Promise.resolve('reply');
      },
      eval: () => Promise.reject(new Error('unused')),
      del: () => Promise.resolve(0),
    };
    expect(await scriptSender(client)('sha', 1, ['key', 'arg'])).toBe('reply');
    expect(seen).toEqual([['sha', 1, 'key', 'arg']]);
  });
});
