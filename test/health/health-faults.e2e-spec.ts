/**
 * The terminus indicator on Express and Fastify against a private
 * redis-server, killed (SIGKILL) and restarted on the same port:
 * - a RedisStore: up with its PING latency, down (503) while Redis is dead,
 *   up again once the client reconnects;
 * - a TwoTierStore with failMode 'local': degraded while its fallback
 *   decides (terminus 12: still 200), up once the fallback ends.
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { PLATFORMS } from '../utils/create-app.js';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { withRedisServer } from '../utils/with-redis-server.js';
import { until } from '../events/events.fixtures.js';
import { healthApp } from './health.fixtures.js';

describe.each(PLATFORMS)(
  'RateLimitHealthIndicator with Redis killed and restarted (%s)',
  (platform) => {
    let app: INestApplication | undefined;
    silenceRateLimitLogs();
    const redis = withRedisServer({
      each: true,
      client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 50 },
      quietErrors: true,
      beforeStop: async () => {
        await app?.close();
        app = undefined;
      },
    });

    const health = () => request(app!.getHttpServer()).get('/health');
    const restart = async () => {
      await redis.server.restart();
      await until(() => redis.client.status === 'ready', 10_000);
    };

    it('a RedisStore: up with its latency, down (503) with Redis dead, up again after the restart', async () => {
      app = await healthApp(platform, {
        store: new RedisStore({
          client: redis.client,
          keyPrefix: uniquePrefix('health'),
          timeoutMs: ANSWERED_DEADLINE_MS,
        }),
      });
      const up = await health().expect(200);
      expect(up.body).toMatchObject({
        status: 'ok',
        info: { 'rate-limit': { status: 'up', store: 'redis', latencyMs: expect.any(Number) } },
      });

      await redis.server.kill();
      const started = performance.now();
      const down = await health().expect(503);
      expect(performance.now() - started).toBeLessThan(2_000); // the client's fast failure (the PING's 20 s deadline would fail this)
      expect(down.body).toMatchObject({
        status: 'error',
        error: {
          'rate-limit': {
            status: 'down',
            store: 'redis',
            error: expect.stringContaining('RedisStore: PING'),
          },
        },
      });
      expect(JSON.stringify(down.body)).not.toContain(String(redis.server.port)); // no connection details

      await restart();
      await health().expect(200);
    });

    it('a TwoTierStore with failMode open: down (503) with Redis dead, since nothing decides in its place', async () => {
      const store = new TwoTierStore({
        client: redis.client,
        keyPrefix: uniquePrefix('health-tt-open'),
        time: 'client',
        timeoutMs: ANSWERED_DEADLINE_MS,
      });
      app = await healthApp(platform, { store });
      await health().expect(200);
      await redis.server.kill();
      const down = await health().expect(503);
      expect(down.body.error['rate-limit']).toMatchObject({ status: 'down', store: 'two-tier' });
    });

    it('a TwoTierStore with failMode local: degraded while its fallback decides, up once Redis is back', async () => {
      const store = new TwoTierStore({
        client: redis.client,
        keyPrefix: uniquePrefix('health-tt'),
        time: 'client',
        timeoutMs: ANSWERED_DEADLINE_MS,
        instances: 2,
        probeIntervalMs: 50,
      });
      app = await healthApp(platform, { store, failMode: 'local' });
      await request(app.getHttpServer()).get('/limited').expect(200);
      expect((await health().expect(200)).body.details['rate-limit']).toMatchObject({
        status: 'up',
        store: 'two-tier',
      });

      await redis.server.kill();
      // Redis dead, the fallback not yet in use (no request since): degraded all the same, since the
      // module's failMode is 'local' and the next request will be decided by the fallback.
      const beforeFallback = await health().expect(200);
      expect(beforeFallback.body.details['rate-limit']).toMatchObject({
        status: 'degraded',
        store: 'two-tier',
        error: expect.stringContaining('RedisStore: PING'),
      });
      await request(app.getHttpServer()).get('/limited').expect(200); // decided by the fallback
      expect(store.degraded).toBe(true);
      const degraded = await health().expect(200);
      expect(degraded.body).toMatchObject({
        status: 'degraded',
        details: { 'rate-limit': { status: 'degraded', store: 'two-tier' } },
      });

      await restart();
      await until(() => !store.degraded, 10_000);
      expect((await health().expect(200)).body).toMatchObject({
        status: 'ok',
        details: { 'rate-limit': { status: 'up', store: 'two-tier' } },
      });
    });
  },
);
