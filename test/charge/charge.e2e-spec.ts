/**
 * `charge: 'failures' | 'successes'` end to end, on Express and Fastify, on
 * the memory store, the Redis store and the two-tier store: every request is
 * charged at admission and given back after the handler when its outcome
 * says it should not have counted, so concurrent requests can never get past
 * the limit together.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';
import { ChargeController, gate } from './charge.controller.js';

describe.each(ALL_STORES)('charge by outcome (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let clock: ManualClock;

    beforeEach(async () => {
      clock = new ManualClock(1_700_000_000_000);
      gate.entered = 0;
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({ clock, store: makeStore(`charge-${kind}-${platform}`) }),
        ],
        controllers: [ChargeController],
      });
    });
    afterEach(async () => {
      gate.open();
      await app.close();
      (gate as unknown as { opened: boolean }).opened = false;
    });

    const login = (password: string) =>
      request(app.getHttpServer()).post(`/charge/login?password=${password}`);

    it("20 concurrent wrong passwords against '5 failures per 15 min': exactly 5 reach the handler", async () => {
      const pending = Array.from({ length: 20 }, () => login('wrong').then((res) => res.status));
      // Every request is either in the handler or answered 429 before any outcome exists.
      while (gate.entered < 5) await new Promise((resolve) => setImmediate(resolve));
      gate.open();
      const statuses = await Promise.all(pending);
      expect(gate.entered).toBe(5);
      expect(statuses.filter((status) => status === 401)).toHaveLength(5);
      expect(statuses.filter((status) => status === 429)).toHaveLength(15);
      expect((await login('right')).status).toBe(429); // the budget of failures is spent: the right password waits too
    });

    it('successful logins give their token back: 10 in a row, then 5 failures still fit', async () => {
      gate.open();
      for (let i = 0; i < 10; i++) expect((await login('right')).status).toBe(201);
      for (let i = 0; i < 5; i++) expect((await login('wrong')).status).toBe(401);
      const denied = await login('wrong');
      expect(denied.status).toBe(429);
      expect(denied.headers['retry-after']).toBe('180'); // one failure back every 3 min
    });

    it("charge: 'successes': failed calls give their token back, successes count", async () => {
      for (let i = 0; i < 5; i++)
        expect((await request(app.getHttpServer()).get('/charge/export?fail=1')).status).toBe(403);
      for (let i = 0; i < 3; i++)
        expect((await request(app.getHttpServer()).get('/charge/export')).status).toBe(200);
      expect((await request(app.getHttpServer()).get('/charge/export')).status).toBe(429);
    });

    it('isChargeFailure decides what counts: only 409s here; one that throws leaves the request charged', async () => {
      for (const status of [400, 500, 404])
        expect(
          (await request(app.getHttpServer()).get(`/charge/conflict?status=${status}`)).status,
        ).toBe(status);
      expect((await request(app.getHttpServer()).get('/charge/conflict')).status).toBe(200);
      for (let i = 0; i < 2; i++)
        expect((await request(app.getHttpServer()).get('/charge/conflict?status=409')).status).toBe(
          409,
        );
      expect((await request(app.getHttpServer()).get('/charge/conflict')).status).toBe(429);

      for (let i = 0; i < 2; i++)
        expect((await request(app.getHttpServer()).get('/charge/broken')).status).toBe(200);
      expect((await request(app.getHttpServer()).get('/charge/broken')).status).toBe(429);
    });

    it('a refund never makes the bucket fuller than it would have been: after a full refill, a success gives nothing back', async () => {
      gate.open();
      for (let i = 0; i < 4; i++) expect((await login('wrong')).status).toBe(401);
      clock.advance(15 * 60_000); // full again
      for (let i = 0; i < 3; i++) expect((await login('right')).status).toBe(201);
      for (let i = 0; i < 5; i++) expect((await login('wrong')).status).toBe(401);
      expect((await login('wrong')).status).toBe(429);
    });
  });
});
