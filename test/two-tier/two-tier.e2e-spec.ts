/**
 * The Nest module with a TwoTierStore (real Redis, client time on the
 * module's manual clock), on Express and on Fastify: the burst is admitted,
 * then 429 with an exact Retry-After; a leasable limit is served mostly by
 * the local tier with the same headers and the same 429.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { ON_TEST_CLOCK } from '../utils/test-clock-store-options.js';
import { TwoTierController } from './two-tier.controller.js';

describe.each(PLATFORMS)('TwoTierStore in the module (%s)', (platform) => {
  let app: INestApplication;
  let client: Redis;
  let store: TwoTierStore;
  const clock = new ManualClock(1_700_000_000_000);

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(async () => {
    await client.quit();
  });

  beforeEach(async () => {
    store = new TwoTierStore({
      client,
      keyPrefix: uniquePrefix(`e2e-${platform}`),
      ...ON_TEST_CLOCK,
    });
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store, clock })],
      controllers: [TwoTierController],
    });
  });
  afterEach(() => app.close()); // closes the store (not the client)

  it('admits the burst, then answers 429 with an exact Retry-After', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(app.getHttpServer()).get('/tt/small').expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=3');
      expect(res.headers['ratelimit']).toBe(`"default";r=${2 - i};t=1`);
    }
    const denied = await request(app.getHttpServer()).get('/tt/small').expect(429);
    expect(denied.headers['retry-after']).toBe('1');
    expect(denied.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 1 });
    // Deny-cached: answered again without Redis, same wait.
    const calls = store.stats().redisCalls;
    expect(
      (await request(app.getHttpServer()).get('/tt/small').expect(429)).headers['retry-after'],
    ).toBe('1');
    expect(store.stats()).toMatchObject({ redisCalls: calls, denyCacheHits: 1 });
    clock.advance(1000);
    await request(app.getHttpServer()).get('/tt/small').expect(200);
  });

  it('serves a leasable limit mostly locally, with the same headers and the same 429', async () => {
    for (let i = 0; i < 40; i++) {
      const res = await request(app.getHttpServer()).get('/tt/wide').expect(200);
      expect(res.headers['ratelimit']).toBe(`"wide";r=${39 - i};t=1`);
    }
    const denied = await request(app.getHttpServer()).get('/tt/wide').expect(429);
    expect(denied.headers['ratelimit']).toBe('"wide";r=0;t=1');
    expect(Number(denied.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const stats = store.stats();
    expect(stats.leasesTaken).toBeGreaterThan(0);
    expect(stats.localDecisions).toBeGreaterThan(20);
    expect(stats.redisCalls).toBeLessThan(20);
  });
});
