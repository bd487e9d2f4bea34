/**
 * Window algorithms end to end: a real Nest application on Express and
 * Fastify, on the memory, Redis and two-tier stores (Redis in client time,
 * so the module's ManualClock decides), through supertest. Headers are the
 * default draft -11 `RateLimit` / `RateLimit-Policy` and `Retry-After`.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';
import { WindowsController } from './windows.controller.js';

/** 2023-11-14T22:13:20Z: 20 s into a minute (1_700_000_000_000 is 20_000 past a multiple of 60_000). */
const T = 1_700_000_000_000;
const MINUTE_START = T - 20_000;

describe.each(ALL_STORES)('window algorithms (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let clock: ManualClock;

    beforeEach(async () => {
      clock = new ManualClock(T);
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({ clock, store: makeStore(`windows-${kind}-${platform}`) }),
        ],
        controllers: [WindowsController],
      });
    });
    afterEach(() => app.close());

    const get = (path: string) => request(app.getHttpServer()).get(path);

    it("'5/min' fixed window: exactly 5, then 429 with honest headers, and 5 again at the window's edge", async () => {
      for (let i = 0; i < 5; i++) {
        const res = await get('/windows/fixed');
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-policy']).toBe('"fixed";q=5;w=60');
        // t: the 40 s left in this minute's window, whatever is left of the quota.
        expect(res.headers['ratelimit']).toBe(`"fixed";r=${4 - i};t=40`);
      }
      clock.advance(39_000); // 1 s before the edge
      const denied = await get('/windows/fixed');
      expect(denied.status).toBe(429);
      expect(denied.headers['ratelimit']).toBe('"fixed";r=0;t=1');
      expect(denied.headers['retry-after']).toBe('1');
      clock.set(MINUTE_START + 60_000 - 1);
      expect((await get('/windows/fixed')).status).toBe(429); // 1 ms before the edge: still this window
      clock.set(MINUTE_START + 60_000);
      for (let i = 0; i < 5; i++) expect((await get('/windows/fixed')).status).toBe(200);
      expect((await get('/windows/fixed')).status).toBe(429);
    });

    it("'4/min' sliding window: the previous minute's count slides out gradually; Retry-After is when a request fits", async () => {
      for (let i = 0; i < 4; i++) expect((await get('/windows/sliding')).status).toBe(200);
      const denied = await get('/windows/sliding');
      expect(denied.status).toBe(429);
      // Next window starts in 40 s; then 1 of the 4 must slide out: a quarter of a minute, 15 s. 55 s in all.
      expect(denied.headers['retry-after']).toBe('55');
      expect(denied.headers['ratelimit']).toBe('"sliding";r=0;t=55');
      clock.advance(55_000 - 1);
      expect((await get('/windows/sliding')).status).toBe(429);
      clock.advance(1);
      expect((await get('/windows/sliding')).status).toBe(200);
      expect((await get('/windows/sliding')).status).toBe(429);
    });

    it("a calendar daily quota ('3/day' in Europe/Paris) starts over at midnight in Paris, not in UTC", async () => {
      // 2026-03-28 23:30 in Paris (22:30Z); the next day is the 23-hour day daylight saving starts.
      clock.set(Date.parse('2026-03-28T22:30:00Z'));
      for (let i = 0; i < 3; i++) expect((await get('/windows/daily')).status).toBe(200);
      const denied = await get('/windows/daily');
      expect(denied.status).toBe(429);
      expect(denied.headers['retry-after']).toBe('1800'); // midnight in Paris, 23:00Z
      expect(denied.headers['ratelimit']).toBe('"daily";r=0;t=1800');
      clock.set(Date.parse('2026-03-28T23:00:00Z'));
      const fresh = await get('/windows/daily');
      expect(fresh.status).toBe(200);
      expect(fresh.headers['ratelimit']).toBe(`"daily";r=2;t=${23 * 3600}`); // a 23-hour day
      await get('/windows/daily');
      await get('/windows/daily');
      expect((await get('/windows/daily')).status).toBe(429);
      clock.set(Date.parse('2026-03-29T22:00:00Z')); // midnight in Paris again (UTC+2 now)
      expect((await get('/windows/daily')).status).toBe(200);
    });

    it("the README's daily quota: headers at 12:30 in Paris", async () => {
      clock.set(Date.parse('2026-05-05T10:30:00Z'));
      const res = await get('/windows/reports');
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"burst";q=20;w=2, "daily";q=1000;w=86400');
      expect(res.headers['ratelimit']).toBe('"burst";r=19;t=1, "daily";r=999;t=41400'); // 11.5 h to midnight in Paris
    });

    it('a token bucket and a daily quota on one route: a request denied by one charges neither', async () => {
      clock.set(Date.parse('2026-05-05T12:00:00Z'));
      for (let i = 0; i < 3; i++) expect((await get('/windows/mixed')).status).toBe(200);
      // The bucket is empty: denied, and the daily quota keeps its 1 left.
      const denied = await get('/windows/mixed');
      expect(denied.status).toBe(429);
      expect(denied.headers['ratelimit']).toBe('"burst";r=0;t=1, "daily";r=1;t=43200');
      clock.advance(1000);
      expect((await get('/windows/mixed')).status).toBe(200); // the daily quota's last one
      clock.advance(5000);
      const spent = await get('/windows/mixed');
      expect(spent.status).toBe(429);
      // Denied by the daily quota: the bucket (full again) was not charged.
      expect(spent.headers['ratelimit']).toBe('"burst";r=3;t=1, "daily";r=0;t=43194');
      expect(spent.headers['retry-after']).toBe('43194');
    });
  });
});
