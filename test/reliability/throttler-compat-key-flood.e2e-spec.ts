/**
 * Trackers an attacker controls, against the throttler-compat guard: a
 * `getTracker` reading a header (an API key, a proxy's client header), as
 * throttler's docs suggest. 100,000 distinct trackers (2,000 over HTTP, the
 * rest through the storage as the guard calls it) against a MemoryStore of
 * `maxKeys` 2,000: the store stays within it, and the legitimate caller,
 * over its limit and blocked for the hour before the flood, stays denied
 * through it. Before the fix it was evicted and admitted again (9 times):
 * MemoryStore evicted the window that ends first among its candidates, and
 * the blocked window, begun before the flood's, ends first; eviction now
 * keeps a running block, then the window holding more (`eviction-order.ts`).
 * A 15 kB tracker (under Node's 16 kB
 * header limit) with a `generateKey` that keeps it raw: the key the store
 * holds stays short, on memory and on Redis, as the native module bounds
 * identities (`boundedIdentity`: past 128 characters, a SHA-256 digest).
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ManualClock, MemoryStore } from 'nestjs-holdup';
import type { ConsumeRequest, ConsumeResult } from 'nestjs-holdup/store';
import { RedisStore } from 'nestjs-holdup/redis';
import {
  Throttle,
  ThrottlerGuard,
  ThrottlerModule,
  ThrottlerStorage,
  seconds,
  type ThrottlerStorageService,
} from 'nestjs-holdup/throttler-compat';
import type { Redis } from 'ioredis';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';

const MAX_KEYS = 2_000;
const HTTP_FLOOD = 2_000;
const FLOOD = 100_000;
const report = process.env.HOLDUP_REPORT === '1';

/** The caller is a header the client sends, as throttler users write it. */
@Injectable()
class HeaderTrackerGuard extends ThrottlerGuard {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- throttler's signature
  protected override async getTracker(req: Record<string, any>): Promise<string> {
    return (req.headers['x-client'] as string | undefined) ?? (req.ip as string);
  }
}

@Controller()
class FloodController {
  @Get('login')
  login() {
    return { ok: true };
  }

  // A generateKey that keeps the tracker as it is (no hash): the key is the client's.
  @Throttle({ default: { limit: 5, ttl: seconds(3600), generateKey: (_ctx, tracker) => tracker } })
  @Get('raw')
  raw() {
    return { ok: true };
  }
}

/** A MemoryStore that notes the longest key it was given (what it holds per bucket). */
class KeyLengthStore extends MemoryStore {
  longestKey = 0;
  override consume(request: ConsumeRequest): ConsumeResult {
    for (const check of request.checks)
      this.longestKey = Math.max(this.longestKey, check.key.length);
    return super.consume(request);
  }
}

describe.each(PLATFORMS)('throttler-compat: trackers an attacker mints (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;
  const boot = async (storage: MemoryStore | RedisStore) => {
    clock = new ManualClock(1_700_000_000_000);
    app = await createApp(platform, {
      imports: [
        ThrottlerModule.forRoot({ throttlers: [{ limit: 5, ttl: seconds(3600) }], clock, storage }),
      ],
      controllers: [FloodController],
      providers: [{ provide: APP_GUARD, useClass: HeaderTrackerGuard }],
    });
  };
  afterEach(() => app.close());
  const get = (path: string, client: string) =>
    request(app.getHttpServer()).get(path).set('x-client', client);

  const flood = async () => {
    const store = new KeyLengthStore({ maxKeys: MAX_KEYS });
    await boot(store);
    const victim = async () => (await get('/login', 'victim')).status;
    for (let i = 0; i < 5; i++) expect(await victim()).toBe(200);
    expect(await victim()).toBe(429); // and blocked for the hour

    let victimAdmitted = 0;
    for (let i = 0; i < HTTP_FLOOD; i++) {
      clock.advance(1);
      expect((await get('/login', `minted-${i}`)).status).toBe(200);
      if (i % 500 === 0 && (await victim()) === 200) victimAdmitted++;
    }
    // The rest as the guard charges them: throttler's key (a SHA-256 of route and tracker).
    const storage = app.get<ThrottlerStorageService>(ThrottlerStorage);
    for (let i = HTTP_FLOOD; i < FLOOD; i++) {
      clock.advance(1);
      const key = createHash('sha256')
        .update(`FloodController-login-default-minted-${i}`)
        .digest('hex');
      await storage.increment(key, seconds(3600), 5, seconds(3600), 'default');
      if (i % 10_000 === 0 && (await victim()) === 200) victimAdmitted++;
      if (i % 1_000 === 0) expect(store.size).toBeLessThanOrEqual(MAX_KEYS);
    }
    const last = await get('/login', 'victim');
    if (report)
      console.log(
        `${platform}: size ${store.size} (max ${MAX_KEYS}), evictions ${store.evictions}, victim admitted ${victimAdmitted} during the flood, then ${last.status} Retry-After ${last.headers['retry-after']}`,
      );
    expect(store.size).toBeLessThanOrEqual(MAX_KEYS);
    expect(store.evictions).toBeGreaterThan(0);
    return { victimAdmitted, last: last.status };
  };

  it(`${FLOOD} minted trackers through maxKeys ${MAX_KEYS}: the store stays bounded`, async () => {
    await flood();
  });

  it('the blocked caller stays denied through the flood', async () => {
    expect(await flood()).toEqual({ victimAdmitted: 0, last: 429 });
  });

  it('a 15 kB tracker kept raw by generateKey: the MemoryStore key stays short, and still limited', async () => {
    const store = new KeyLengthStore();
    await boot(store);
    const huge = 'x'.repeat(15_000);
    for (let i = 0; i < 5; i++) expect((await get('/raw', huge)).status).toBe(200);
    expect((await get('/raw', huge)).status).toBe(429);
    expect((await get('/raw', `${huge}y`)).status).toBe(200); // another tracker, another bucket
    if (report) console.log(`${platform}: longest MemoryStore key ${store.longestKey} characters`);
    expect(store.longestKey).toBeLessThanOrEqual(256);
  });

  describe('on Redis', () => {
    let client: Redis;
    beforeAll(async () => {
      client = await connectSharedClient();
    });
    afterAll(() => client.quit());

    it('a 15 kB tracker kept raw by generateKey: the Redis key stays short, and still limited', async () => {
      const keyPrefix = uniquePrefix('compat-huge-key');
      await boot(new RedisStore({ client, keyPrefix, time: 'client', timeoutMs: 5_000 }));
      const huge = 'x'.repeat(15_000);
      for (let i = 0; i < 5; i++) expect((await get('/raw', huge)).status).toBe(200);
      expect((await get('/raw', huge)).status).toBe(429);
      const keys = await client.keys(`${keyPrefix}*`);
      const longest = Math.max(...keys.map((key) => key.length));
      if (report)
        console.log(`${platform}: ${keys.length} Redis keys, longest ${longest} characters`);
      expect(keys.length).toBeGreaterThan(0);
      expect(longest).toBeLessThanOrEqual(keyPrefix.length + 256);
    });
  });
});
