/**
 * The throttler-compat module on a RedisStore (`storage`) whose redis-server
 * is frozen (SIGSTOP) or killed under load, with each fail mode. During the
 * fault, 30 concurrent requests: every one answered (none past `timeoutMs`
 * plus a second: a hang is the failure), as the fail mode says ('open' 200,
 * 'closed' 503), no unhandled rejection, at most 2 log lines for the outage
 * (its failure and its recovery), whatever the number of requests. After
 * healing, limiting resumes: a fresh tracker gets its 2, then 429.
 */
import request from 'supertest';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ManualClock } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { Throttle, ThrottlerGuard, ThrottlerModule, seconds } from 'nestjs-holdup/throttler-compat';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { withRedisServer } from '../utils/with-redis-server.js';

const TIMEOUT_MS = 100;
const ANSWER_BOUND_MS = TIMEOUT_MS + 1_000;
const CALLS = 30;
const report = process.env.HOLDUP_REPORT === '1';

@Controller()
@Throttle({ default: { limit: 2, ttl: seconds(60), blockDuration: seconds(30) } })
class FaultController {
  @Get('items')
  items() {
    return { ok: true };
  }
}

const FAULTS = ['stopped', 'killed'] as const;
const MODES = [
  ['open', 200],
  ['closed', 503],
] as const;

describe.each(PLATFORMS)('throttler-compat on a failing Redis (%s)', (platform) => {
  let app: INestApplication | undefined;
  const logs = silenceRateLimitLogs();
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 30 },
    quietErrors: true,
    beforeStop: async () => {
      await app?.close();
      app = undefined;
    },
  });
  const get = (tracker: string) =>
    request(app!.getHttpServer())
      .get('/items')
      .set('x-forwarded-for', tracker)
      .timeout(ANSWER_BOUND_MS)
      .then((res) => res.status);

  describe.each(FAULTS)('Redis %s', (fault) => {
    it.each(MODES)(
      "failMode '%s': every request answered %d, at most 2 lines, limiting resumes",
      async (failMode, status) => {
        const unhandled: unknown[] = [];
        const onUnhandled = (reason: unknown) => unhandled.push(reason);
        process.on('unhandledRejection', onUnhandled);
        try {
          app = await createApp(
            platform,
            {
              imports: [
                ThrottlerModule.forRoot({
                  throttlers: [{ limit: 2, ttl: seconds(60) }],
                  clock: new ManualClock(1_700_000_000_000),
                  failMode,
                  storage: new RedisStore({
                    client: redis.client,
                    keyPrefix: uniquePrefix('compat-faults'),
                    time: 'client',
                    timeoutMs: TIMEOUT_MS,
                  }),
                }),
              ],
              controllers: [FaultController],
              providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
            },
            {
              fastify: { trustProxy: true },
              beforeInit: (nest, p) => {
                if (p === 'express')
                  (nest.getHttpAdapter().getInstance() as { set(n: string, v: unknown): void }).set(
                    'trust proxy',
                    true,
                  );
              },
            },
          );
          expect([await get('10.0.0.1'), await get('10.0.0.1'), await get('10.0.0.1')]).toEqual([
            200, 200, 429,
          ]);
          logs.clear();

          if (fault === 'stopped') redis.server.pause();
          else await redis.server.kill();
          // Half on the blocked caller, half on new ones.
          const during = await Promise.all(
            Array.from({ length: CALLS }, (_, i) => get(i % 2 === 0 ? '10.0.0.1' : `10.1.0.${i}`)),
          );
          if (fault === 'stopped') redis.server.resume();
          else await redis.server.restart();
          while (redis.client.status !== 'ready') await new Promise((r) => setTimeout(r, 20));

          // Limiting resumes on a fresh tracker (the first calls may still find the store recovering).
          const after: number[] = [];
          for (let i = 0; i < 20 && after.join() !== '200,200,429'; i++) {
            const tracker = `10.2.0.${i}`;
            after.splice(0, 3, await get(tracker), await get(tracker), await get(tracker));
          }
          const lines = logs.messages('error').length + logs.messages('warn').length;
          if (report)
            console.log(
              `${platform} ${fault} ${failMode}: during ${during.join(',')}; lines ${lines}; after ${after.join(',')}`,
            );
          expect(during).toEqual(Array<number>(CALLS).fill(status));
          expect(after).toEqual([200, 200, 429]);
          expect(lines).toBeLessThanOrEqual(2);
          expect(unhandled).toEqual([]);
        } finally {
          process.off('unhandledRejection', onUnhandled);
        }
      },
    );
  });
});
