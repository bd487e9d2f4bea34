/**
 * The most denied callers (`hotKeys`), read through `RateLimiter.hottestKeys()`
 * from an admin endpoint, on Express and Fastify, with the memory, Redis and
 * two-tier stores: counted per limit by the caller each limit's key made
 * (an address, a header's value), denials only, and only when enabled.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, RateLimiter } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';
import { HotKeysController } from './hot-keys.controller.js';

describe.each(ALL_STORES)('hot keys (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let clock: ManualClock;
    beforeEach(async () => {
      clock = new ManualClock(1_700_000_000_000);
      const store = makeStore(`hot-keys-${kind}-${platform}-${Date.now()}`);
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            clock,
            store,
            trustProxy: true,
            hotKeys: { size: 10, window: '1min' },
          }),
        ],
        controllers: [HotKeysController],
      });
    });
    afterEach(() => app.close());
    const from = (path: string, address: string) =>
      request(app.getHttpServer()).get(path).set('x-forwarded-for', address);
    const hot = async (limit?: string) =>
      (
        await request(app.getHttpServer())
          .get('/admin/hot-keys')
          .query(limit ? { limit } : {})
      ).body;

    // Callers as their bucket knows them: an address as is, `h=` a header's value, `k=` a key function's or RateLimiter's.
    it("counts each limit's denials by caller, most denied first; admitted requests are not counted", async () => {
      const statuses: number[] = [];
      for (const [address, times] of [
        ['203.0.113.7', 6],
        ['203.0.113.8', 3],
        ['203.0.113.9', 1],
      ] as const) {
        for (let i = 0; i < times; i++) statuses.push((await from('/search', address)).status);
      }
      expect(statuses.filter((status) => status === 429)).toHaveLength(5 + 2);
      for (let i = 0; i < 4; i++)
        await request(app.getHttpServer()).get('/partner').set('x-api-key', 'key-of-acme');
      expect(await hot()).toEqual([
        { limit: 'search', key: '203.0.113.7', denied: 5, overcount: 0 },
        { limit: 'search', key: '203.0.113.8', denied: 2, overcount: 0 },
        { limit: 'partner', key: 'h=key-of-acme', denied: 2, overcount: 0 },
      ]);
      expect(await hot('partner')).toEqual([
        { limit: 'partner', key: 'h=key-of-acme', denied: 2, overcount: 0 },
      ]);
    });

    it('forgets denials older than two windows', async () => {
      for (let i = 0; i < 3; i++) await from('/search', '203.0.113.7');
      expect(await hot()).toHaveLength(1);
      clock.advance(2 * 60_000);
      expect(await hot()).toEqual([]);
    });
  });
});

describe('hot keys: off by default', () => {
  it('hottestKeys() without the option throws, naming it, rather than answering "nobody"', async () => {
    const app = await createApp('express', {
      imports: [RateLimitModule.forRoot({})],
      controllers: [HotKeysController],
    });
    try {
      expect(() => app.get(RateLimiter).hottestKeys()).toThrow(
        'RateLimiter.hottestKeys: enable the hotKeys option of RateLimitModule.forRoot() to keep the summary',
      );
      expect((await request(app.getHttpServer()).get('/admin/hot-keys')).status).toBe(500);
    } finally {
      await app.close();
    }
  });

  it('a bad hotKeys option fails the bootstrap naming it', async () => {
    await expect(
      createApp('express', {
        imports: [RateLimitModule.forRoot({ hotKeys: { size: -1 } })],
        controllers: [HotKeysController],
      }),
    ).rejects.toThrow('RateLimitModule: hotKeys.size must be an integer from 1 to 10000, got -1');
  });

  it("RateLimiter.consume() denials count too, under the limit's name", async () => {
    const app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ hotKeys: true })],
      controllers: [HotKeysController],
    });
    try {
      const limiter = app.get(RateLimiter);
      const limit = { name: 'exports', rate: '1/min', burst: 1 };
      for (let i = 0; i < 3; i++) await limiter.consume('user-42', limit);
      expect(limiter.hottestKeys()).toEqual([
        { limit: 'exports', key: 'k=user-42', denied: 2, overcount: 0 },
      ]);
    } finally {
      await app.close();
    }
  });
});
