import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { makeStore, STORES, type StoreFixture } from '../utils/stores.js';
import { BasicController } from './basic.controller.js';

describe.each(STORES)('basic limits on the %s store', (storeKind) => {
  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let fixture: StoreFixture;
    const clock = new ManualClock(1_000_000);

    beforeEach(async () => {
      fixture = await makeStore(storeKind, 'basic');
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ clock, store: fixture.store })],
        controllers: [BasicController],
      });
    });
    afterEach(async () => {
      await app.close();
      await fixture.release();
    });

    it('admits the burst, then answers 429 with an exact Retry-After, then refills with the clock', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await request(app.getHttpServer()).get('/basic').expect(200);
        expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=3');
        expect(res.headers['ratelimit']).toBe(`"default";r=${2 - i};t=1`);
      }
      const denied = await request(app.getHttpServer()).get('/basic').expect(429);
      expect(denied.headers['retry-after']).toBe('1');
      expect(denied.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 1 });
      clock.advance(999);
      await request(app.getHttpServer()).get('/basic').expect(429);
      clock.advance(1);
      const refilled = await request(app.getHttpServer()).get('/basic').expect(200);
      expect(refilled.headers['ratelimit']).toBe('"default";r=0;t=1');
    });

    it('class and method limits both apply: the method limit (cost 2, burst 4) denies the third request', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await request(app.getHttpServer()).get('/basic/search')).status);
      expect(statuses).toEqual([200, 200, 429]);
      // /basic has its own bucket: untouched by /basic/search
      await request(app.getHttpServer()).get('/basic').expect(200);
    });

    it('@SkipRateLimit() routes are never limited', async () => {
      for (let i = 0; i < 10; i++)
        await request(app.getHttpServer()).get('/basic/health').expect(200);
    });
  });
});
