/**
 * `failMode: 'local'` through the module, on Express and on Fastify: a
 * TwoTierStore whose Redis is killed keeps limiting from its local share
 * (here half of each limit, `instances: 2`), a limit that says `'closed'`
 * still answers 503, and once Redis is back the shared bucket decides again.
 * Each test has its own redis-server.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ManualClock, RateLimit, RateLimitModule } from 'nestjs-holdup';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { connectRedisClient, RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { startRedisServer, uniquePrefix, type RedisServer } from '../utils/redis-harness.js';

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
    let server: RedisServer;
    let client: Redis;
    let store: TwoTierStore;
    let app: INestApplication;
    const clock = new ManualClock(1_700_000_000_000);

    beforeEach(async () => {
      server = await startRedisServer();
      client = await connectRedisClient(server.url, {
        ...RECOMMENDED_OPTIONS,
        retryStrategy: () => 50,
      });
      client.on('error', () => undefined);
      store = new TwoTierStore({
        client,
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
    afterEach(async () => {
      await app.close();
      client.disconnect();
      await server.stop();
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
      await server.kill();

      // Local share: burst 4 / 2 instances = 2, whatever Redis had left.
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const { status, ms } = await timed('/local');
        statuses.push(status);
        expect(ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(store.stats()).toMatchObject({ degraded: true, fallbacks: 1, fallbackDecisions: 3 });

      // The strictest fail mode of a route wins: 'closed' is not served locally.
      const strict = await timed('/local/strict');
      expect(strict.status).toBe(503);
      expect(strict.ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);

      await server.restart();
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
