/**
 * Dynamic limits (rate and burst as functions of the call, sync or async),
 * on Express and Fastify, memory, Redis and two-tier stores: each call gets its plan's
 * bucket, the headers show the quota that applied, a plan change keeps what
 * was consumed, and a bad value is decided by the fail mode, said once.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';
import { PlansController } from './plans.controller.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

describe.each(ALL_STORES)('dynamic limits (%s store)', (storeKind) => {
  const makeStore = storesOfKind(storeKind);
  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication | undefined;
    let clock: ManualClock;
    const logs = silenceRateLimitLogs();

    const boot = async (options: RateLimitModuleOptions = {}) => {
      clock = new ManualClock(1_700_000_000_000);
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            clock,
            store: makeStore(`dynamic-${storeKind}-${platform}`),
            ...options,
          }),
        ],
        controllers: [PlansController],
      });
    };
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });
    const get = (path: string, plan?: string, from = '203.0.113.1') =>
      request(app!.getHttpServer())
        .get(path)
        .set({ 'x-forwarded-for': from, ...(plan ? { 'x-plan': plan } : {}) });
    const seen = (res: request.Response) => [
      res.status,
      res.headers['ratelimit-policy'],
      res.headers['ratelimit'],
    ];

    it.each(['sync', 'async'])('%s: each plan its own quota, in the headers too', async (kind) => {
      await boot({ trustProxy: true });
      expect(seen(await get(`/plans/${kind}`, 'free'))).toEqual([
        200,
        '"api";q=2;w=60',
        '"api";r=1;t=30',
      ]);
      expect(seen(await get(`/plans/${kind}`, 'free'))).toEqual([
        200,
        '"api";q=2;w=60',
        '"api";r=0;t=30',
      ]);
      expect((await get(`/plans/${kind}`, 'free')).status).toBe(429);
      // Another caller on the pro plan.
      expect(seen(await get(`/plans/${kind}`, 'pro', '203.0.113.2'))).toEqual([
        200,
        '"api";q=10;w=60',
        '"api";r=9;t=6',
      ]);
    });

    it('a plan change takes effect on the next call and keeps what was consumed (as time to refill)', async () => {
      await boot({ trustProxy: true });
      await get('/plans/sync', 'free');
      await get('/plans/sync', 'free');
      // Free is empty: 60 s to refill. Under pro the same 60 s are the whole bucket: the next token in 6 s.
      const upgraded = await get('/plans/sync', 'pro');
      expect([upgraded.status, upgraded.headers['retry-after']]).toEqual([429, '6']);
      clock.advance(6000);
      expect(seen(await get('/plans/sync', 'pro'))).toEqual([
        200,
        '"api";q=10;w=60',
        '"api";r=0;t=6',
      ]);
    });

    it("a bad value is decided by the fail mode ('open' admits that call), and said once", async () => {
      await boot({ trustProxy: true });
      for (let i = 0; i < 3; i++) expect((await get('/plans/sync', 'platinum')).status).toBe(200);
      const lines = logs.warn.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes('rate or burst function failed'));
      expect(lines).toEqual([
        expect.stringContaining(
          'the rate function produced a bad value: rate must be a positive number',
        ),
      ]);
      // The plans that exist are still limited.
      await get('/plans/sync', 'free');
      await get('/plans/sync', 'free');
      expect((await get('/plans/sync', 'free')).status).toBe(429);
    });

    it("failMode 'closed': a bad value answers 503", async () => {
      await boot({ trustProxy: true, failMode: 'closed' });
      expect((await get('/plans/async', 'platinum')).status).toBe(503);
    });
  });
});

describe('dynamic limits: start-up validation', () => {
  it('a rate function with adaptive is refused, naming the limit', async () => {
    const limits = [{ name: 'mixed', rate: () => 10, adaptive: { min: 1, max: 20 } }];
    await expect(
      createApp('express', {
        imports: [RateLimitModule.forRoot({ limits })],
        controllers: [PlansController],
      }),
    ).rejects.toThrow('limit "mixed": adaptive cannot be combined with a rate or burst function');
  });
});
