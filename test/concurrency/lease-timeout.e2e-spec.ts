import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { Redis } from 'ioredis';
import { RateLimitModule } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { createApp } from '../utils/create-app.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ACQUIRE_SLOT_LUA } from '../../adapters/redis/scripts/slots.lua.js';
import { redisKey } from '../../adapters/redis/redis-keys.js';
import { nextMessage } from '../utils/next-message.js';
import { sharedRedisUrl } from '../utils/redis-harness.js';
import { GenerationsController } from './generations.controller.js';

const WORKER = fileURLToPath(new URL('./slot-holder.worker.mjs', import.meta.url));

/**
 * Two instances on one Redis. Instance A dies holding its slots: its
 * store's releases never reach Redis (as when the process is killed
 * mid-request). Instance B is refused while A's leases run, and admitted
 * once `leaseTimeout` (1 s, on Redis server time) has passed.
 */
describe("concurrency: a dead instance's slots come back after leaseTimeout (Redis)", () => {
  let client: Redis;
  let a: INestApplication;
  let b: INestApplication;
  const closing: INestApplication[] = [];

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const app of closing) await app.close();
    await client?.quit();
  });

  it('refused while the leases run, admitted after them', async () => {
    const keyPrefix = uniquePrefix('lease');
    const dying = new RedisStore({ client, keyPrefix, timeoutMs: 5_000 });
    // A crashed process never releases.
    dying.slots.release = () => Promise.resolve();
    a = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store: dying })],
      controllers: [GenerationsController],
    });
    b = await createApp('express', {
      imports: [
        RateLimitModule.forRoot({ store: new RedisStore({ client, keyPrefix, timeoutMs: 5_000 }) }),
      ],
      controllers: [GenerationsController],
    });

    // A's leases run for 1 s from their start, which is after `sentAt`: B's refusal is only
    // sure while B's answer comes within that second. A loaded machine can stall past it, and
    // then the leases may have ended (what the second half checks, not a failure): again, on a
    // fresh key, up to three times.
    let key = '';
    let takenAt = 0;
    for (let attempt = 0; ; attempt++) {
      key = `k${attempt}`;
      const sentAt = Date.now();
      for (let i = 0; i < 2; i++)
        expect((await request(a.getHttpServer()).get('/leased').set('x-api-key', key)).status).toBe(
          200,
        );
      // After both answers: no lease started later than this, however slow the machine.
      takenAt = Date.now();
      // Both of the key's slots are held by A (which is gone, as far as its slots are concerned).
      const refused = await request(b.getHttpServer()).get('/leased').set('x-api-key', key);
      if (Date.now() - sentAt > 900 && attempt < 2) continue;
      expect(refused.status).toBe(429);
      expect(refused.headers['ratelimit']).toBe('"leased";r=0');
      break;
    }
    // Another key is not concerned.
    expect((await request(b.getHttpServer()).get('/leased').set('x-api-key', 'other')).status).toBe(
      200,
    );

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, takenAt + 1_150 - Date.now())));
    const back = await request(b.getHttpServer()).get('/leased').set('x-api-key', key);
    expect(back.status).toBe(200);
    expect(back.headers['ratelimit']).toBe('"leased";r=1');
  });

  it('a process killed (SIGKILL) while holding slots: they come back after its lease', async () => {
    const keyPrefix = uniquePrefix('lease-kill');
    const store = new RedisStore({ client, keyPrefix, timeoutMs: 5_000 });
    const keys: string[] = [];
    const acquire = store.slots.acquire.bind(store.slots);
    store.slots.acquire = (request) => {
      keys.push(request.key);
      return acquire(request);
    };
    const app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store })],
      controllers: [GenerationsController],
    });
    closing.push(app);
    // The key this route uses for 'k' (its slot is released at once).
    expect((await request(app.getHttpServer()).get('/leased').set('x-api-key', 'k')).status).toBe(
      200,
    );
    const env = {
      ...process.env,
      NODE_OPTIONS: '',
      REDIS_URL: sharedRedisUrl(),
      SCRIPT: ACQUIRE_SLOT_LUA,
      KEY: redisKey(keyPrefix, keys[0]!),
      LIMIT: '2',
      // 2 s: the refusal below must reach Redis before the leases end, however long the kill
      // and the request take on a loaded machine.
      LEASE_MS: '2000',
      SLOTS: '2',
    };
    const child = fork(WORKER, [], { env, stdio: 'inherit' });
    await nextMessage(child, 'holding');
    const takenAt = Date.now();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect((await request(app.getHttpServer()).get('/leased').set('x-api-key', 'k')).status).toBe(
      429,
    );
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, takenAt + 2_150 - Date.now())));
    expect((await request(app.getHttpServer()).get('/leased').set('x-api-key', 'k')).status).toBe(
      200,
    );
  });

  it('the sorted set expires with its last lease: nothing is left in Redis', async () => {
    const keyPrefix = uniquePrefix('lease-ttl');
    const store = new RedisStore({ client, keyPrefix, timeoutMs: 5_000 });
    const key = 'cc|leased|r|k=x';
    const setKey = `${keyPrefix}{${key}}`;
    // Leases of a minute while the limit is checked: server time, so a stall of the machine
    // between two calls must not end them.
    const acquire = (id: string, leaseMs = 60_000) =>
      store.slots.acquire({ key, limit: 2, id, leaseMs, now: 0 });
    expect(await acquire('one')).toEqual({ allowed: true, inFlight: 1 });
    expect(await acquire('two')).toEqual({ allowed: true, inFlight: 2 });
    expect(await acquire('three')).toEqual({ allowed: false, inFlight: 2 });
    await store.slots.release({ key, id: 'one', now: 0 });
    expect(await store.slots.inFlight(key)).toBe(1);
    const ttl = await client.pttl(setKey);
    expect(ttl).toBeGreaterThan(300);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // The last lease, short: the set lives no longer than it.
    await store.slots.release({ key, id: 'two', now: 0 });
    expect(await acquire('last', 300)).toEqual({ allowed: true, inFlight: 1 });
    const lastTtl = await client.pttl(setKey);
    // -2: already gone (a stall of 300 ms since the acquire); -1 (no expiry) is what must not be.
    if (lastTtl !== -2) {
      expect(lastTtl).toBeGreaterThan(0);
      expect(lastTtl).toBeLessThanOrEqual(300);
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await client.exists(setKey)).toBe(0);
    store.close();
  });
});
