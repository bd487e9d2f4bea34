/**
 * Reserve and settle end to end (issue 30), on Express and Fastify, on the
 * memory and the Redis store: a call reserves its estimate at admission and
 * settles what it really spent after the handler (for a stream, at its end);
 * a refund admits more at once, an overspend puts the budget into debt that
 * the next call waits out, its `Retry-After` saying how long. Time is the
 * test's clock: nothing sleeps.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ON_TEST_CLOCK, STORES, storesOfKind } from '../utils/stores.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { asyncSettles, SettleController, settleGate, spent } from './settle.controller.js';

const T0 = 1_700_000_000_000;

/** Lets pending callbacks (an asynchronous settle, a store call it started) run. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100_000 && !condition(); i++) await new Promise((r) => setImmediate(r));
  expect(condition()).toBe(true);
}

describe.each(STORES)('settle (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let clock: ManualClock;

    beforeEach(async () => {
      clock = new ManualClock(T0);
      spent.length = 0;
      settleGate.open();
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({ clock, store: makeStore(`settle-${kind}-${platform}`) }),
        ],
        controllers: [SettleController],
      });
    });
    afterEach(async () => {
      settleGate.open();
      await app.close();
    });

    const complete = (spend: number) =>
      request(app.getHttpServer()).post(`/settle/complete?spend=${spend}`);

    /** `count` concurrent calls, all decided before any settles; the statuses. */
    async function burst(count: number, spend: number, admitted: number): Promise<number[]> {
      settleGate.close();
      let denied = 0;
      const pending = Array.from({ length: count }, () =>
        complete(spend).then((r) => {
          if (r.status === 429) denied++;
          return r.status;
        }),
      );
      // Every call decided (in the handler, or answered 429) before any settles.
      await until(() => settleGate.entered === admitted && denied === count - admitted);
      settleGate.open();
      return Promise.all(pending);
    }

    it('20 concurrent estimates of 100 against 1,000 admit 10; settled at 50 they admit 5 more; settled at 150 the next waits out the debt', async () => {
      const first = await burst(20, 50, 10);
      expect(first.filter((s) => s === 201)).toHaveLength(10);
      expect(first.filter((s) => s === 429)).toHaveLength(10);
      // 10 x 50 given back: 5 more estimates of 100 fit, at once.
      const second = await burst(20, 150, 5);
      expect(second.filter((s) => s === 201)).toHaveLength(5);
      expect(second.filter((s) => s === 429)).toHaveLength(15);
      // 5 x 50 overspent: 250 tokens of debt, repaid at 100/s; a call of 100 waits 3.5 s.
      const denied = await complete(100);
      expect(denied.status).toBe(429);
      expect(denied.headers['retry-after']).toBe('4');
      expect(denied.headers['ratelimit']).toMatch(/^"tokens";r=0;t=\d+$/);
      clock.advance(3_499);
      expect((await complete(100)).status).toBe(429);
      clock.advance(1);
      expect((await complete(100)).status).toBe(201);
      // The bound (docs/settle.md): actual costs admitted <= burst + rate x elapsed + the
      // overspends of the calls in flight at once (5 x 50). Here, 1,350 <= 1,000 + 350 + 250;
      // and once the debt is repaid (3.5 s), the overspends are covered by the rate: 1,250 <= 1,350.
      const elapsedS = (clock.now() - T0) / 1000;
      const admittedCost = spent.reduce((sum, cost) => sum + cost, 0);
      expect(spent).toHaveLength(16);
      expect(admittedCost).toBe(1350);
      expect(admittedCost).toBeLessThanOrEqual(1000 + 100 * elapsedS + 5 * 50);
      expect(admittedCost - 100).toBeLessThanOrEqual(1000 + 100 * elapsedS);
    });

    it('a streamed answer settles at its end, from its last event', async () => {
      const res = await request(app.getHttpServer())
        .get('/settle/stream?chunks=3')
        .buffer(true)
        .parse((r, done) => {
          let body = '';
          r.on('data', (chunk: Buffer) => (body += chunk.toString()));
          r.on('end', () => done(null, body));
        });
      expect(res.status).toBe(200);
      expect(String(res.body)).toContain('"total":1200');
      // Reserved 100, spent 1,200: 200 tokens past empty; a call of 100 waits 3 s.
      const denied = await request(app.getHttpServer()).get('/settle/stream?chunks=1');
      expect(denied.status).toBe(429);
      expect(denied.headers['retry-after']).toBe('3');
    });

    it('an asynchronous settle refunds too; one that answers nonsense keeps the estimate', async () => {
      asyncSettles.count = 0;
      for (let i = 0; i < 10; i++)
        expect((await request(app.getHttpServer()).post('/settle/async?spend=0')).status).toBe(201);
      // Each call gives its 100 back once its settle answers: the budget is whole again.
      await until(() => asyncSettles.count === 10);
      for (let i = 0; i < 10; i++) {
        const res = await request(app.getHttpServer()).post('/settle/async?spend=100');
        expect(res.status).toBe(201);
      }
      expect((await request(app.getHttpServer()).post('/settle/async?spend=100')).status).toBe(429);
      // NaN: settled at the estimate, 10 calls of 100 and no more.
      for (let i = 0; i < 10; i++)
        expect((await request(app.getHttpServer()).post('/settle/broken')).status).toBe(201);
      expect((await request(app.getHttpServer()).post('/settle/broken')).status).toBe(429);
    });
  });
});

describe.each(PLATFORMS)('settle: 4 instances on one Redis (%s)', (platform) => {
  const clients: Redis[] = [];
  let apps: INestApplication[];
  let clock: ManualClock;

  beforeAll(async () => {
    for (let i = 0; i < 4; i++) clients.push(await connectSharedClient());
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });
  beforeEach(async () => {
    clock = new ManualClock(T0);
    spent.length = 0;
    settleGate.open();
    const keyPrefix = uniquePrefix(`settle-fleet-${platform}`);
    apps = await Promise.all(
      clients.map((client) =>
        createApp(platform, {
          imports: [
            RateLimitModule.forRoot({
              clock,
              store: new RedisStore({ client, keyPrefix, ...ON_TEST_CLOCK }),
            }),
          ],
          controllers: [SettleController],
        }),
      ),
    );
  });
  afterEach(async () => {
    settleGate.open();
    await Promise.all(apps.map((app) => app.close()));
  });

  const complete = (i: number, spend: number) =>
    request(apps[i % apps.length]!.getHttpServer()).post(`/settle/complete?spend=${spend}`);

  async function burst(count: number, spend: number, admitted: number): Promise<number[]> {
    settleGate.close();
    let denied = 0;
    const pending = Array.from({ length: count }, (_, i) =>
      complete(i, spend).then((r) => {
        if (r.status === 429) denied++;
        return r.status;
      }),
    );
    await until(() => settleGate.entered === admitted && denied === count - admitted);
    settleGate.open();
    return Promise.all(pending);
  }

  it('the same budget across the instances: 10 of 20, then 5 of 20, then every instance waits out the debt', async () => {
    expect((await burst(20, 50, 10)).filter((s) => s === 201)).toHaveLength(10);
    expect((await burst(20, 150, 5)).filter((s) => s === 201)).toHaveLength(5);
    for (let i = 0; i < 4; i++) {
      const denied = await complete(i, 100);
      expect(denied.status).toBe(429);
      expect(denied.headers['retry-after']).toBe('4');
    }
    clock.advance(3_500);
    expect((await complete(3, 100)).status).toBe(201);
    expect(spent.reduce((sum, cost) => sum + cost, 0)).toBe(1350);
  });
});
