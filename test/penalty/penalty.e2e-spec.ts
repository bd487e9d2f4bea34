/**
 * Penalties (`blockDuration`, `RateLimiter.block()`) on Express and Fastify,
 * on the memory, Redis and two-tier stores: a key denied once is blocked for
 * the duration, `Retry-After` and `t` say until when, other keys are not
 * touched, and a key that abuses again after its block is blocked again.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';
import { PenaltyController } from './penalty.controller.js';

describe.each(ALL_STORES)('penalties (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let clock: ManualClock;
    beforeEach(async () => {
      clock = new ManualClock(1_700_000_000_000);
      const options: RateLimitModuleOptions = {
        clock,
        store: makeStore(`penalty-${kind}-${platform}`),
        trustProxy: true,
      };
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot(options)],
        controllers: [PenaltyController],
      });
    });
    afterEach(() => app.close());
    const get = (path: string, from = '198.51.100.7') =>
      request(app.getHttpServer()).get(path).set('x-forwarded-for', from);
    const seen = (res: request.Response) => [
      res.status,
      res.headers['retry-after'],
      res.headers['ratelimit'],
    ];

    it('denied once, blocked for 15 minutes; then admitted at the rate; abused again, blocked again', async () => {
      expect(seen(await get('/penalty'))).toEqual([200, undefined, '"abuse";r=1;t=6']);
      expect(seen(await get('/penalty'))).toEqual([200, undefined, '"abuse";r=0;t=6']);
      expect(seen(await get('/penalty'))).toEqual([429, '900', '"abuse";r=0;t=900']);
      clock.advance(10 * 60_000);
      expect(seen(await get('/penalty'))).toEqual([429, '300', '"abuse";r=0;t=300']); // still blocked: not extended by trying
      expect((await get('/penalty', '198.51.100.8')).status).toBe(200); // another caller is not touched
      clock.advance(5 * 60_000);
      expect(seen(await get('/penalty'))).toEqual([200, undefined, '"abuse";r=0;t=6']);
      expect(seen(await get('/penalty'))).toEqual([429, '900', '"abuse";r=0;t=900']);
    });

    it('RateLimiter.block(): an operator bans a key, enforce() then refuses it until the ban ends', async () => {
      expect((await get('/penalty/export')).status).toBe(200);
      expect((await request(app.getHttpServer()).post('/penalty/ban')).body).toEqual({
        remaining: 0,
      });
      const banned = await get('/penalty/export');
      expect([banned.status, banned.headers['retry-after']]).toEqual([429, '60']);
      clock.advance(60_000);
      expect((await get('/penalty/export')).status).toBe(200);
    });
  });
});

describe('penalties: start-up validation', () => {
  it.each([
    [
      { rate: '10/min', blockDuration: '15 fortnights' },
      `blockDuration must be a positive number of milliseconds or a duration such as '15min', got "15 fortnights"`,
    ],
    [
      { rate: '10/min', blockDuration: 1000 },
      'blockDuration (1000 ms) must be longer than the interval between two tokens (6000 ms), or it blocks nothing',
    ],
    [
      { rate: '10/min', blockDuration: '1h', shadow: true },
      'blockDuration means nothing on a shadow limit, which never denies',
    ],
  ])('%j', async (limit, message) => {
    await expect(
      createApp('express', {
        imports: [RateLimitModule.forRoot({ limits: [limit] })],
        controllers: [PenaltyController],
      }),
    ).rejects.toThrow(message);
  });
});
