import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { AppModule } from '../../sample-app/app.module.js';
import { createApp, PLATFORMS } from '../utils/create-app.js';

/**
 * The sample app as shipped, on each store it supports and on both
 * platforms. Redis comes from the harness (REDIS_URL); each run gets its own
 * key prefix so runs and workers never share buckets.
 */
const STORES = ['memory', 'redis', 'two-tier'] as const;

describe.each(STORES)('sample app on the %s store', (store) => {
  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;

    beforeEach(async () => {
      process.env.RATE_LIMIT_STORE = store;
      process.env.RATE_LIMIT_KEY_PREFIX = `sample-${randomUUID()}:`;
      app = await createApp(platform, { imports: [AppModule] });
    });
    afterEach(async () => {
      await app.close();
      delete process.env.RATE_LIMIT_STORE;
      delete process.env.RATE_LIMIT_KEY_PREFIX;
    });

    it('public routes: 10 requests per IP, then 429 with Retry-After and the draft headers', async () => {
      // The app runs on real time (its stores as shipped: Redis' own clock), refilling a token a
      // second: a loaded machine that takes over a second for the first ten requests sees one
      // more admitted per second taken, and no more.
      const startedAt = Date.now();
      const admitted: number[] = [];
      let denied: request.Response | undefined;
      while (denied === undefined && admitted.length < 30) {
        const response = await request(app.getHttpServer()).get('/products');
        if (response.status === 429) denied = response;
        else admitted.push(response.status);
      }
      const elapsedS = (Date.now() - startedAt) / 1000;
      expect(admitted).toEqual(Array(admitted.length).fill(200));
      expect(admitted.length).toBeGreaterThanOrEqual(10);
      expect(admitted.length).toBeLessThanOrEqual(10 + Math.ceil(elapsedS));
      expect(denied).toBeDefined();
      expect(denied!.headers['retry-after']).toBe('1');
      expect(denied!.headers['ratelimit-policy']).toBe('"default";q=10;w=10');
      expect(denied!.headers['ratelimit']).toBe('"default";r=0;t=1');
    });

    it('account routes: one budget per user, shared by the routes; the export costs 5', async () => {
      const as = (user: string) => ({ Authorization: `Bearer ${user}` });
      await request(app.getHttpServer()).get('/account').expect(401);
      await request(app.getHttpServer()).post('/account/export').set(as('alice')).expect(201);
      await request(app.getHttpServer()).get('/account').set(as('alice')).expect(429);
      const bob = await request(app.getHttpServer()).get('/account').set(as('bob')).expect(200);
      expect(bob.body).toEqual({ user: 'bob' });
      expect(bob.headers['ratelimit']).toBe('"account";r=4;t=6');
    });

    it('the health route is never limited', async () => {
      for (let i = 0; i < 15; i++) await request(app.getHttpServer()).get('/health').expect(200);
    });
  });
});
