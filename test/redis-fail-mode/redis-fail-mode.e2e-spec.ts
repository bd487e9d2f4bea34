import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { RateLimit, RateLimitModule, type FailMode } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import request from 'supertest';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';
import { watchStalls } from '../utils/stall-watch.js';
import { withRedisServer } from '../utils/with-redis-server.js';

@Controller('guarded')
class GuardedController {
  @RateLimit({ rate: 1, burst: 2 })
  @Get()
  get() {
    return { ok: true };
  }

  @RateLimit({ rate: 1, burst: 2, failMode: 'closed' })
  @Get('strict')
  strict() {
    return { ok: true };
  }
}

/**
 * The module in front of a real Redis that dies and comes back: every request
 * is answered (by failMode) within the store's timeout, and limiting is exact
 * again once Redis is back. Each test has its own redis-server.
 */
describe.each(PLATFORMS)('failMode with a Redis that fails (%s)', (platform) => {
  let app: INestApplication;
  // Answered in time, give or take the machine's own stalls.
  const stalls = watchStalls();
  afterAll(() => stalls.stop());
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 50 },
    quietErrors: true,
    beforeStop: () => app.close(),
  });

  const boot = async (failMode: FailMode, timeoutMs = 100) => {
    const store = new RedisStore({
      client: redis.client,
      keyPrefix: uniquePrefix('fail-mode'),
      timeoutMs,
    });
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store, failMode })],
      controllers: [GuardedController],
    });
  };

  const timed = async (path: string) => {
    const started = performance.now();
    const res = await request(app.getHttpServer()).get(path);
    return { status: res.status, ms: performance.now() - started };
  };

  it("'open': Redis paused (SIGSTOP) → admitted within the timeout; exact again after SIGCONT", async () => {
    await boot('open');
    expect((await timed('/guarded')).status).toBe(200);
    redis.server.pause();
    stalls.reset();
    for (let i = 0; i < 4; i++) {
      const { status, ms } = await timed('/guarded');
      expect(status).toBe(200);
      expect(ms).toBeLessThan(100 + 400 + stalls.maxMs);
    }
    // A limit that says 'closed' overrides the module's 'open'.
    expect((await timed('/guarded/strict')).status).toBe(503);
    redis.server.resume();
    await sleep(200); // let the paused replies drain
    // The 503'd request's script was already in Redis' socket: Redis ran it on
    // waking up and charged one token. A timed-out decision can only make later
    // ones stricter, never admit more: 1 token of 2 left.
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await timed('/guarded/strict')).status);
    expect(statuses).toEqual([200, 429, 429]);
  });

  it("'closed': Redis killed → 503 at once; back to limiting after a restart", async () => {
    // A killed server fails each call at once (no offline queue), well within 500 ms.
    await boot('closed', ANSWERED_DEADLINE_MS);
    await redis.server.kill();
    stalls.reset();
    for (let i = 0; i < 3; i++) {
      const { status, ms } = await timed('/guarded');
      expect(status).toBe(503);
      expect(ms).toBeLessThan(100 + 400 + stalls.maxMs);
    }
    await redis.server.restart();
    await new Promise((resolve) =>
      redis.client.status === 'ready' ? resolve(undefined) : redis.client.once('ready', resolve),
    );
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await timed('/guarded')).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
