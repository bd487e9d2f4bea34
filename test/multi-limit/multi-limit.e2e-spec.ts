import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { makeStore, STORES, type StoreFixture } from '../utils/stores.js';
import { MultiLimitController } from './multi-limit.controller.js';

describe.each(STORES.flatMap((store) => PLATFORMS.map((platform) => [store, platform] as const)))(
  'several limits and costs on one route (%s store, %s)',
  (storeKind, platform) => {
    let app: INestApplication;
    let clock: ManualClock;
    let fixture: StoreFixture;

    beforeEach(async () => {
      clock = new ManualClock(5_000_000);
      fixture = await makeStore(storeKind, 'multi-limit');
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ clock, store: fixture.store })],
        controllers: [MultiLimitController],
      });
    });
    afterEach(async () => {
      await app.close();
      await fixture.release();
    });

    const get = (path: string) => request(app.getHttpServer()).get(path);
    const expectHit = async (
      path: string,
      status: number,
      rateLimit: string,
      retryAfter?: string,
    ) => {
      const res = await get(path);
      expect({
        status: res.status,
        rateLimit: res.headers['ratelimit'],
        retryAfter: res.headers['retry-after'],
      }).toEqual({
        status,
        rateLimit,
        retryAfter,
      });
      return res;
    };

    describe('two limits', () => {
      const policy = '"slow";q=5;w=300, "fast";q=2;w=2';

      it('a request denied by the second limit is not charged to the first', async () => {
        const first = await expectHit('/multi/pair', 200, '"slow";r=4;t=60, "fast";r=1;t=1');
        expect(first.headers['ratelimit-policy']).toBe(policy);
        await expectHit('/multi/pair', 200, '"slow";r=3;t=60, "fast";r=0;t=1');
        // Denied by "fast", three times: "slow" stays at 3.
        for (let i = 0; i < 3; i++) {
          const denied = await expectHit(
            '/multi/pair',
            429,
            '"slow";r=3;t=60, "fast";r=0;t=1',
            '1',
          );
          expect(denied.headers['ratelimit-policy']).toBe(policy);
          expect(denied.body).toEqual({
            statusCode: 429,
            message: 'Too Many Requests',
            retryAfter: 1,
          });
        }
        clock.advance(1000);
        // The next admitted request shows "slow" charged for admitted requests only.
        await expectHit('/multi/pair', 200, '"slow";r=2;t=59, "fast";r=0;t=1');
      });

      it('the first limit admits exactly its burst, whatever the second denied in between', async () => {
        let admitted = 0;
        // 2 now, then one per second while "fast" refills; denials in between must not count.
        for (let second = 0; second < 8; second++) {
          for (let attempt = 0; attempt < 3; attempt++) {
            const res = await get('/multi/pair');
            if (res.status === 200) admitted++;
            else expect(res.status).toBe(429);
          }
          clock.advance(1000);
        }
        expect(admitted).toBe(5);
      });

      it('a request denied by the first limit is not charged to the second', async () => {
        await expectHit('/multi/pair', 200, '"slow";r=4;t=60, "fast";r=1;t=1');
        await expectHit('/multi/pair', 200, '"slow";r=3;t=60, "fast";r=0;t=1');
        clock.advance(1000);
        await expectHit('/multi/pair', 200, '"slow";r=2;t=59, "fast";r=0;t=1');
        clock.advance(1000);
        await expectHit('/multi/pair', 200, '"slow";r=1;t=58, "fast";r=0;t=1');
        clock.advance(1000);
        // slow: 5 charged within 3 s of a 1/min refill: empty, next token in 57 s.
        await expectHit('/multi/pair', 200, '"slow";r=0;t=57, "fast";r=0;t=1');
        clock.advance(1000);
        // Denied by "slow" while "fast" has a token: "fast" keeps it.
        await expectHit('/multi/pair', 429, '"slow";r=0;t=56, "fast";r=1;t=1', '56');
        clock.advance(1000);
        await expectHit('/multi/pair', 429, '"slow";r=0;t=55, "fast";r=2;t=1', '55');
      });
    });

    describe('cost', () => {
      it('a static cost takes that many tokens per request', async () => {
        const first = await expectHit('/multi/static-cost', 200, '"default";r=3;t=1');
        expect(first.headers['ratelimit-policy']).toBe('"default";q=5;w=5');
        await expectHit('/multi/static-cost', 200, '"default";r=1;t=1');
        // One token left, two needed: denied, one more second to wait; nothing charged.
        await expectHit('/multi/static-cost', 429, '"default";r=1;t=1', '1');
        clock.advance(1000);
        await expectHit('/multi/static-cost', 200, '"default";r=0;t=1');
        await expectHit('/multi/static-cost', 429, '"default";r=0;t=1', '2');
      });

      it('a cost function is evaluated per request', async () => {
        await expectHit('/multi/dynamic-cost?cost=3', 200, '"default";r=2;t=1');
        await expectHit('/multi/dynamic-cost?cost=2', 200, '"default";r=0;t=1');
        await expectHit('/multi/dynamic-cost', 429, '"default";r=0;t=1', '1');
        clock.advance(3000);
        await expectHit('/multi/dynamic-cost?cost=3', 200, '"default";r=0;t=1');
        clock.advance(2500);
        // 2.5 tokens: a cost of 3 waits 0.5 s, rounded up.
        await expectHit('/multi/dynamic-cost?cost=3', 429, '"default";r=2;t=1', '1');
        await expectHit('/multi/dynamic-cost?cost=2', 200, '"default";r=0;t=1');
      });

      it('a cost function returning more than the burst is denied with a reason and no Retry-After', async () => {
        await expectHit('/multi/dynamic-cost?cost=1', 200, '"default";r=4;t=1');
        const denied = await expectHit(
          '/multi/dynamic-cost?cost=6',
          429,
          '"default";r=4;t=1',
          undefined,
        );
        expect(denied.headers['ratelimit-policy']).toBe('"default";q=5;w=5');
        expect(denied.body).toEqual({
          statusCode: 429,
          message: 'Request cost exceeds the rate limit burst',
          retryAfter: null,
        });
        // Waiting cannot help, and nothing was charged: the bucket still has 4.
        clock.advance(60_000);
        await expectHit('/multi/dynamic-cost?cost=6', 429, '"default";r=5;t=1', undefined);
        await expectHit('/multi/dynamic-cost?cost=5', 200, '"default";r=0;t=1');
      });

      it("cost above one limit's burst is charged to no limit of the route", async () => {
        const denied = await expectHit(
          '/multi/dynamic-pair?cost=4',
          429,
          '"outer";r=10;t=60, "inner";r=3;t=1',
          undefined,
        );
        expect(denied.headers['ratelimit-policy']).toBe('"outer";q=10;w=600, "inner";q=3;w=3');
        expect(denied.body).toEqual({
          statusCode: 429,
          message: 'Request cost exceeds the rate limit burst',
          retryAfter: null,
        });
        await expectHit('/multi/dynamic-pair?cost=3', 200, '"outer";r=9;t=60, "inner";r=0;t=1');
      });
    });
  },
);
