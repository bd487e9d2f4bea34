/**
 * RateLimitEvents when Redis dies and comes back, on Express and Fastify,
 * each test with its own redis-server (killed with SIGKILL, restarted on the
 * same port):
 * - a RedisStore (failMode 'open'): store failures, counted in a row, then
 *   one recovery on the first decision Redis answers again;
 * - a TwoTierStore (failMode 'local'): the fallback entered on the first
 *   failure, left when the store's probes find Redis back (no request needed).
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ManualClock, RateLimitEvents, RateLimitModule, type RateLimitStore } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { withRedisServer } from '../utils/with-redis-server.js';
import { EventsController, record, settled, until } from './events.fixtures.js';

describe.each(PLATFORMS)('RateLimitEvents with Redis killed and restarted (%s)', (platform) => {
  let app: INestApplication | undefined;
  // The store's own failure and recovery lines: expected here.
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

  const start = async (store: RateLimitStore, failMode: 'open' | 'local') => {
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({ store, clock: new ManualClock(1_700_000_000_000), failMode }),
      ],
      controllers: [EventsController],
    });
    return app.get(RateLimitEvents);
  };
  const get = (status: number) =>
    request(app!.getHttpServer()).get('/events/limited').expect(status);
  const restart = async () => {
    await redis.server.restart();
    await until(() => redis.client.status === 'ready', 10_000);
  };

  it('a RedisStore: store-failure for each failed decision, then store-recovered once Redis answers', async () => {
    const events = await start(
      new RedisStore({
        client: redis.client,
        keyPrefix: uniquePrefix('ev-redis'),
        timeoutMs: ANSWERED_DEADLINE_MS,
      }),
      'open',
    );
    const { seen } = record(events, 'store-failure', 'store-recovered');
    await get(200);
    await redis.server.kill();
    await get(200); // failMode 'open'
    await get(200);
    await until(() => seen.length === 2);
    expect(
      seen.map((s) => [s.type, (s.event as { consecutiveFailures: number }).consecutiveFailures]),
    ).toEqual([
      ['store-failure', 1],
      ['store-failure', 2],
    ]);
    expect(seen[0]!.event).toMatchObject({ failMode: 'open', error: expect.any(Error) });

    await restart();
    await get(200); // a fresh bucket: the killed server kept nothing (persistence off)
    await get(200);
    await until(() => seen.length === 3);
    await settled();
    expect(seen.slice(2)).toEqual([{ type: 'store-recovered', event: { failures: 2 } }]);
  });

  it('a TwoTierStore with failMode local: fallback-entered on the first failure, fallback-left when Redis is back', async () => {
    const store = new TwoTierStore({
      client: redis.client,
      keyPrefix: uniquePrefix('ev-tt'),
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
      instances: 2,
      probeIntervalMs: 50,
    });
    const events = await start(store, 'local');
    const { seen } = record(events, 'fallback-entered', 'fallback-left', 'store-failure');
    await get(200);
    await redis.server.kill();
    await get(200); // decided by the local share (burst 2 / 2 instances = 1)
    await get(429);
    await until(() => seen.some((s) => s.type === 'fallback-entered'));
    expect(seen.filter((s) => s.type !== 'store-failure')).toEqual([
      { type: 'fallback-entered', event: { active: true } },
    ]);

    await restart();
    // No request: the fallback's probes find Redis and end it.
    await until(() => seen.some((s) => s.type === 'fallback-left'), 10_000);
    expect(seen.filter((s) => s.type !== 'store-failure')).toEqual([
      { type: 'fallback-entered', event: { active: true } },
      { type: 'fallback-left', event: { active: false } },
    ]);
    expect(store.degraded).toBe(false);
  });
});
