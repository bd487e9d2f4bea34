/**
 * `failMode: 'local'` through the module, on Express and on Fastify: a
 * TwoTierStore whose Redis is killed keeps limiting from its local share
 * (here half of each limit, `instances: 2`), a limit that says `'closed'`
 * still answers 503, and once Redis is back the shared bucket decides again.
 * Each test has its own redis-server.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ManualClock, RateLimit, RateLimitModule } from 'nestjs-holdup';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { watchStalls } from '../utils/stall-watch.js';
import { withRedisServer } from '../utils/with-redis-server.js';

@Controller('local')
class LocalController {
  @RateLimit({ rate: '1/min', burst: 4 })
  @Get()
  get() {
    return { ok: true };
  }

  @RateLimit({ rate: '1/min', burst: 4, failMode: 'closed' })
  @Get('strict')
  strict() {
    return { ok: true };
  }
}

const TIMEOUT_MS = 100;
/** Slack for a loaded 2-core CI machine. */
const MARGIN_MS = 400;

describe.each(PLATFORMS)(
  "failMode 'local' with a TwoTierStore whose Redis dies (%s)",
  (platform) => {
    let store: TwoTierStore;
    let app: INestApplication;
    const clock = new ManualClock(1_700_000_000_000);
    const stalls = watchStalls();
    afterAll(() => stalls.stop());

    const redis = withRedisServer({
      each: true,
      client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 50 },
      quietErrors: true,
      beforeStop: () => app.close(),
    });
    beforeEach(async () => {
      store = new TwoTierStore({
        client: redis.client,
        keyPrefix: uniquePrefix('tt-local'),
        time: 'client',
        timeoutMs: TIMEOUT_MS,
        instances: 2,
        probeIntervalMs: 50,
      });
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ store, clock, failMode: 'local' })],
        controllers: [LocalController],
      });
    });

    const timed = async (path: string) => {
      const started = performance.now();
      const res = await request(app.getHttpServer()).get(path);
      return {
        status: res.status,
        ms: performance.now() - started,
        retryAfter: res.headers['retry-after'],
      };
    };

    it('limits from the local share while Redis is down, answers 503 where a limit says closed, and returns to Redis', async () => {
      expect((await timed('/local')).status).toBe(200); // Redis: 3 of 4 left
      await redis.server.kill();
      stalls.reset(); // answered in time, give or take the machine's own stalls

      // Local share: burst 4 / 2 instances = 2, whatever Redis had left.
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const { status, ms } = await timed('/local');
        statuses.push(status);
        expect(ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS + stalls.maxMs);
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(store.stats()).toMatchObject({ degraded: true, fallbacks: 1, fallbackDecisions: 3 });

      // The strictest fail mode of a route wins: 'closed' is not served locally.
      const strict = await timed('/local/strict');
      expect(strict.status).toBe(503);
      expect(strict.ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS + stalls.maxMs);

      await redis.server.restart();
      const deadline = Date.now() + 5_000;
      while (store.degraded && Date.now() < deadline) await sleep(20);
      expect(store.degraded).toBe(false);

      // Redis decides again: the restarted server (no persistence) holds a full bucket of 4.
      const after: number[] = [];
      for (let i = 0; i < 5; i++) after.push((await timed('/local')).status);
      expect(after).toEqual([200, 200, 200, 200, 429]);
    });
  },
);
