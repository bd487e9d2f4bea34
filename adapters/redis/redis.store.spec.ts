import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';
import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { withRedisServer } from '../../test/utils/with-redis-server.js';
import { approximately } from '../../test/utils/approximately.js';
import { connectRedisClient } from '../../test/utils/redis-client.js';
import { ModelStore } from '../../lib/store/contract/model-store.js';
import { DEFAULT_REDIS_TIMEOUT_MS, RedisStore, type RedisClient } from './index.js';
import {
  checkKeyPrefix,
  encodeKey,
  keySlot,
  MAX_ENCODED_KEY_LENGTH,
  redisKey,
} from './redis-keys.js';
import { bucket, check } from '../../test/utils/checks.js';

// Compile-time check: ioredis' Redis and Cluster fit the store's client interface as they are.
export const ioredisFits: [(client: Redis) => RedisClient, (client: Cluster) => RedisClient] = [
  (client) => client,
  (client) => client,
];

/** `INFO commandstats` as `{ evalsha: 12, ... }` (calls per command). */
async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const info = await client.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls[match[1]!] = Number(match[2]);
  return calls;
}

/** A stored bucket value (`<base>:<offset>`, see scripts/gcra.lua.ts) as absolute milliseconds. */
function storedTat(value: string | null): number {
  const [base, offset] = String(value).split(':').map(Number) as [number, number];
  return base + offset;
}

/** Redis server time in ms. */
async function serverNow(client: Redis): Promise<number> {
  const [seconds, micros] = (await client.call('TIME')) as [string, string];
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

describe('redis keys', () => {
  it('computes Redis Cluster slots like Redis does', () => {
    expect(keySlot('123456789')).toBe(12739); // CRC16/XMODEM check value
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
    expect(keySlot('foo{bar}{zap}')).toBe(keySlot('bar'));
  });

  it('escapes braces, the escape character, the hash marker and non-ASCII', () => {
    expect(redisKey('p:', 'ip:1.2.3.4')).toBe('p:{ip:1.2.3.4}');
    expect(redisKey('p:', 'a{b}c')).toBe('p:{a%7Bb%7Dc}');
    expect(redisKey('p:', 'a%7Bb')).toBe('p:{a%257Bb}');
    expect(redisKey('p:', '#x')).toBe('p:{%23x}');
    expect(encodeKey('é\uD800\u0000')).toBe('%E9%uD800%00');
  });

  it('bounds the length by hashing long keys, without colliding with short ones', () => {
    const long = redisKey('p:', 'x'.repeat(100_000));
    expect(long).toMatch(/^p:\{#[0-9a-f]{64}\}$/);
    expect(redisKey('p:', 'x'.repeat(100_000) + 'y')).not.toBe(long);
    expect(redisKey('p:', 'x'.repeat(MAX_ENCODED_KEY_LENGTH))).toBe(
      `p:{${'x'.repeat(MAX_ENCODED_KEY_LENGTH)}}`,
    );
    // A short key cannot start with the hash marker: '#' is always escaped.
    expect(redisKey('p:', long.slice(3, -1))).not.toBe(long);
  });

  it('refuses a prefix that would set the hash tag', () => {
    expect(() => checkKeyPrefix('app{1}:')).toThrow(/keyPrefix must not contain/);
    expect(() => checkKeyPrefix('x'.repeat(101))).toThrow(/at most 100/);
    expect(checkKeyPrefix('app:')).toBe('app:');
  });
});

describe('RedisStore on a standalone Redis', () => {
  // Its own server: tests flush its scripts and count the commands it ran.
  const redis = withRedisServer();
  let prefix: string;

  beforeEach(() => {
    prefix = uniquePrefix('store');
  });

  const makeStore = (options: Partial<ConstructorParameters<typeof RedisStore>[0]> = {}) =>
    new RedisStore({ client: redis.client, keyPrefix: prefix, timeoutMs: 5_000, ...options });

  it('validates its options, naming them', () => {
    expect(() => new RedisStore({} as never)).toThrow(/client must be a Redis client/);
    expect(() => new RedisStore({ client: redis.client, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new RedisStore({ client: redis.client, timeoutMs: Number.NaN })).toThrow(
      /timeoutMs/,
    );
    expect(() => new RedisStore({ client: redis.client, time: 'local' as never })).toThrow(
      /time must be/,
    );
    expect(() => new RedisStore({ client: redis.client, keyPrefix: '{x}' })).toThrow(/keyPrefix/);
    expect(() => new RedisStore({ client: redis.client, expiryPaddingMs: -1 })).toThrow(
      /expiryPaddingMs/,
    );
    expect(DEFAULT_REDIS_TIMEOUT_MS).toBeGreaterThanOrEqual(50);
    expect(DEFAULT_REDIS_TIMEOUT_MS).toBeLessThanOrEqual(200);
  });

  it('calls the scripts by SHA: one EVALSHA per decision, no SCRIPT LOAD, no EVAL once cached', async () => {
    const store = makeStore({ time: 'client' });
    await redis.client.script('FLUSH');
    await store.consume({ checks: [check('warm-up', 10, 10), check('warm-up-2', 10, 10)], now: 0 });
    expect(store.scriptReloads).toBe(1);
    // One script per operation (and consume_one for a single token bucket): each one is sent once after the flush.
    await store.peek({ checks: [bucket('warm-up', 10, 10)], now: 0 });
    expect(store.scriptReloads).toBe(2);
    await store.consume({ checks: [check('warm-up', 10, 10)], now: 0 });
    expect(store.scriptReloads).toBe(3);

    await redis.client.config('RESETSTAT');
    for (let i = 0; i < 20; i++) {
      await store.consume({ checks: [check('a', 10, 10), check('b', 10, 10)], now: i });
    }
    await store.peek({ checks: [bucket('a', 10, 10)], now: 30 });
    const calls = await commandCalls(redis.client);
    expect(calls.evalsha).toBe(21);
    expect(calls.eval).toBeUndefined();
    expect(calls.script).toBeUndefined();
    expect(calls.keys).toBeUndefined();
    expect(calls.scan).toBeUndefined();
    expect(store.scriptReloads).toBe(3);
    expect(store.calls).toBe(24);
  });

  it('recovers from SCRIPT FLUSH with one EVAL, keeping the buckets', async () => {
    const store = makeStore(ON_TEST_CLOCK);
    const c = check('k', 1, 3);
    await store.consume({ checks: [c], now: 0 });
    await redis.client.script('FLUSH');
    const before = store.scriptReloads;
    expect((await store.consume({ checks: [c], now: 0 })).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 1,
    });
    expect(store.scriptReloads).toBe(before + 1);
    expect((await store.consume({ checks: [c], now: 0 })).decisions[0]).toMatchObject({
      allowed: true,
      remaining: 0,
    });
    expect(store.scriptReloads).toBe(before + 1);
  });

  it('expires each key exactly when its bucket is full again (server time)', async () => {
    const store = makeStore();
    await store.consume({ checks: [check('k', 1, 10, 3)], now: 0 });
    const key = redisKey(prefix, 'k');
    const value = (await redis.client.get(key))!;
    const [base, offset] = value.split(':').map(Number) as [number, number];
    expect(Number.isInteger(base)).toBe(true);
    const tat = base + offset;
    const expireAt = Number(await redis.client.call('PEXPIRETIME', key));
    expect(expireAt).toBe(base + Math.ceil(offset));
    expect(expireAt).toBe(Math.ceil(tat));
    const now = await serverNow(redis.client);
    expect(tat - now).toBeGreaterThan(2_000);
    expect(tat - now).toBeLessThanOrEqual(3_000);
  });

  it('expires each key exactly when its bucket is full again (client time), plus any padding', async () => {
    const exact = makeStore({ time: 'client' });
    await exact.consume({ checks: [check('k', 1, 10, 2)], now: 5_000.5 });
    const key = redisKey(prefix, 'k');
    expect(await redis.client.get(key)).toBe('5000:2000.5'); // frame floor(now), offset from it
    expect(storedTat(await redis.client.get(key))).toBe(7_000.5);
    const ttl = await redis.client.pttl(key);
    expect(ttl).toBeGreaterThan(1_000); // 2 s minus however long this took
    expect(ttl).toBeLessThanOrEqual(2_000);

    const padded = makeStore({ time: 'client', expiryPaddingMs: 10_000 });
    await padded.consume({ checks: [check('p', 1, 10, 2)], now: 5_000 });
    const paddedTtl = await redis.client.pttl(redisKey(prefix, 'p'));
    expect(paddedTtl).toBeGreaterThan(11_000);
    expect(paddedTtl).toBeLessThanOrEqual(12_000);
  });

  it('lets Redis drop a key once its bucket is full', async () => {
    const store = makeStore();
    await store.consume({ checks: [check('short', 100, 1)], now: 0 }); // full again in 10 ms
    const key = redisKey(prefix, 'short');
    const deadline = Date.now() + 5_000;
    while ((await redis.client.exists(key)) === 1 && Date.now() < deadline) await sleep(10);
    expect(await redis.client.exists(key)).toBe(0);
  });

  it('writes nothing when a request is denied', async () => {
    const store = makeStore(ON_TEST_CLOCK);
    const open = check('open', 10, 5);
    const shut = check('shut', 1, 1);
    await store.consume({ checks: [shut], now: 0 });
    const shutValue = await redis.client.get(redisKey(prefix, 'shut'));
    const result = await store.consume({ checks: [open, shut], now: 0 });
    expect(result.allowed).toBe(false);
    expect(await redis.client.exists(redisKey(prefix, 'open'))).toBe(0);
    expect(await redis.client.get(redisKey(prefix, 'shut'))).toBe(shutValue);
    const cost = await store.consume({ checks: [check('big', 1, 2, 3)], now: 0 });
    expect(cost.decisions[0]).toMatchObject({
      allowed: false,
      retryAfterMs: Number.POSITIVE_INFINITY,
    });
    expect(await redis.client.exists(redisKey(prefix, 'big'))).toBe(0);
  });

  it('stores one hash-tagged, escaped key per bucket', async () => {
    const store = makeStore(ON_TEST_CLOCK);
    await store.consume({
      checks: [check('user:{x}:é', 1, 5), check('ip:127.0.0.1', 1, 5)],
      now: 0,
    });
    const keys = (await redis.client.keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}{ip:127.0.0.1}`, `${prefix}{user:%7Bx%7D:%E9}`]);
    for (const key of keys) expect(key.match(/[{}]/g)).toEqual(['{', '}']);
  });

  it('uses Redis time by default: request.now is ignored, so skewed instances share one bucket', async () => {
    const a = makeStore();
    const b = makeStore();
    const c = check('shared', 0.1, 2); // one token per 10 s: wide margins for a slow machine
    expect((await a.consume({ checks: [c], now: 0 })).allowed).toBe(true);
    expect((await b.consume({ checks: [c], now: 9e15 })).allowed).toBe(true);
    const denied = await a.consume({ checks: [c], now: -1e12 });
    expect(denied.allowed).toBe(false);
    expect(denied.decisions[0]!.retryAfterMs).toBeGreaterThan(5_000);
    expect(denied.decisions[0]!.retryAfterMs).toBeLessThanOrEqual(10_000);
    const peeked = await b.peek({ checks: [bucket('shared', 0.1, 2)], now: 0 });
    expect(peeked.decisions[0]!.resetMs).toBeGreaterThan(15_000);
    expect(peeked.decisions[0]!.resetMs).toBeLessThanOrEqual(20_000);
  });

  it('keeps fractional milliseconds and infinity through Redis', async () => {
    const store = makeStore(ON_TEST_CLOCK);
    const model = new ModelStore();
    for (const request of [
      { checks: [check('third', 3, 1)], now: 0.25 },
      { checks: [check('third', 3, 1)], now: 100.125 },
      { checks: [check('third', 3, 1, 2)], now: 100.125 },
    ]) {
      expect(await store.consume(request)).toEqual(approximately(model.consume(request)));
    }
    expect(storedTat(await redis.client.get(redisKey(prefix, 'third')))).toBe(0.25 + 1000 / 3);
    const denied = await store.consume({ checks: [check('third', 3, 1)], now: 100.125 });
    expect(Number.isInteger(denied.decisions[0]!.retryAfterMs)).toBe(false);
    const never = await store.consume({ checks: [check('third', 3, 1, 2)], now: 0 });
    expect(never.decisions[0]!.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('keeps full precision at Date.now() magnitudes (computes in the frame of floor(now))', async () => {
    // 1e6/s is 0.001 ms per token; absolute times near 1.7e12 are 2^-12 ms apart,
    // so computing in absolute time would round every charge up by ~20 %.
    const store = makeStore(ON_TEST_CLOCK);
    const now = 1_763_000_000_000.123;
    const c = check('fast', 1e6, 1000);
    for (let i = 0; i < 1000; i++) {
      const { decisions } = await store.consume({ checks: [c], now });
      expect(decisions[0]).toMatchObject({ allowed: true, remaining: 999 - i });
    }
    expect((await store.consume({ checks: [c], now })).allowed).toBe(false);
    // (The caller's own clock is that coarse: now + 0.002 is ~1.95 µs later.)
    expect((await store.consume({ checks: [c], now: now + 0.002 })).allowed).toBe(true);
  });

  it('resets buckets with DEL', async () => {
    const store = makeStore({ time: 'client' });
    await store.consume({ checks: [check('a', 1, 1), check('b', 1, 1)], now: 0 });
    await store.reset({ checks: [bucket('a', 1, 1), bucket('b', 1, 1)], now: 0 });
    expect(await redis.client.exists(redisKey(prefix, 'a'), redisKey(prefix, 'b'))).toBe(0);
  });

  it('close() leaves the client it was given open, and refuses further calls', async () => {
    const store = makeStore({ time: 'client' });
    await store.consume({ checks: [check('k', 1, 1)], now: 0 });
    await store.close();
    await store.close();
    expect(redis.client.status).toBe('ready');
    expect(await redis.client.ping()).toBe('PONG');
    await expect(store.consume({ checks: [check('k', 1, 1)], now: 0 })).rejects.toBeInstanceOf(
      RateLimitStoreError,
    );
  });

  it('fails fast, without queueing, when the client is not connected', async () => {
    const offline = await connectRedisClient(redis.server.url, {}); // ioredis defaults
    const ended = new Promise((resolve) => offline.once('end', resolve));
    offline.disconnect();
    await ended;
    expect(offline.status).toBe('end');
    const store = new RedisStore({ client: offline, keyPrefix: prefix });
    // Rejected before the event loop turns once: nothing was queued for a reconnection.
    const outcome = await Promise.race([
      Promise.resolve(store.consume({ checks: [check('k', 1, 1)], now: 0 })).then(
        () => 'answered',
        (error: unknown) => error,
      ),
      new Promise((resolve) => setImmediate(() => resolve('still waiting'))),
    ]);
    expect(outcome).toBeInstanceOf(RateLimitStoreError);
    expect((outcome as Error).message).toMatch(/not ready \(status "end"\)/);
    expect(store.errors).toBe(1);
    expect(store.timeouts).toBe(0);
  });

  it('wraps Redis error replies in RateLimitStoreError, with the cause', async () => {
    const store = makeStore({ time: 'client' });
    await redis.client.hset(redisKey(prefix, 'hash'), 'field', '1');
    const failure = await store
      .consume({ checks: [check('hash', 1, 1)], now: 0 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RateLimitStoreError);
    expect((failure as RateLimitStoreError).message).toMatch(/WRONGTYPE/);
    expect((failure as RateLimitStoreError).cause).toBeInstanceOf(Error);
    expect(store.errors).toBe(1);
  });
});

// The Redis Cluster suite: redis.store.cluster.spec.ts (`fault` project).
