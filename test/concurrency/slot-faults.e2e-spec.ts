import { Controller, Get, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimit, RateLimitModule } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { createApp } from '../utils/create-app.js';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { withRedisServer } from '../utils/with-redis-server.js';
import { InFlight } from './generations.controller.js';
import { until } from '../utils/time.js';

const gate = new InFlight();

@Controller('f')
class FaultController {
  @RateLimit({ name: 'open', concurrency: 1, key: 'global' })
  @Get('open')
  open() {
    return { ok: true };
  }

  @RateLimit({ name: 'closed', concurrency: 1, key: 'global', failMode: 'closed' })
  @Get('closed')
  closed() {
    return { ok: true };
  }

  @RateLimit({ name: 'held', concurrency: 1, key: 'global' })
  @Get('held')
  async held() {
    gate.enter();
    await gate.gate;
    gate.leave();
    return { ok: true };
  }
}

/**
 * A concurrency limit in front of a Redis that dies (its own redis-server,
 * SIGKILL): an acquisition that fails is decided by the limit's fail mode;
 * a release that fails is contained (said once, never an unhandled
 * rejection), the slot left to its lease.
 */
describe('concurrency slots when Redis fails', () => {
  let app: INestApplication;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const logs = silenceRateLimitLogs();

  beforeEach(() => {
    process.on('unhandledRejection', onUnhandled);
  });
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 50 },
    quietErrors: true,
    beforeStop: async () => {
      gate.release();
      await app.close();
    },
  });
  beforeEach(async () => {
    const store = new RedisStore({
      client: redis.client,
      keyPrefix: uniquePrefix('slot-faults'),
      timeoutMs: ANSWERED_DEADLINE_MS,
    });
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store })],
      controllers: [FaultController],
    });
    gate.reset();
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it("Redis down: failMode 'open' admits without a slot, 'closed' answers 503", async () => {
    expect((await request(app.getHttpServer()).get('/f/open')).status).toBe(200);
    await redis.server.kill();
    for (let i = 0; i < 3; i++) {
      const open = await request(app.getHttpServer()).get('/f/open');
      expect(open.status).toBe(200);
      // Nothing to report for a limit that could not decide.
      expect(open.headers['ratelimit']).toBeUndefined();
      expect((await request(app.getHttpServer()).get('/f/closed')).status).toBe(503);
    }
    // Said once for the burst, not per request.
    expect(
      logs.error.mock.calls.filter(([message]) =>
        String(message).includes('Rate-limit store failed'),
      ),
    ).toHaveLength(1);
  });

  it('a release that fails is said once and never becomes an unhandled rejection', async () => {
    const holding = request(app.getHttpServer())
      .get('/f/held')
      .then((r) => r);
    // Only one may hold the slot: the next is refused while Redis is up.
    await until(() => gate.now >= 1);
    expect((await request(app.getHttpServer()).get('/f/held')).status).toBe(429);
    await redis.server.kill();
    gate.release();
    expect((await holding).status).toBe(200);
    const said = () =>
      logs.warn.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes('could not be released'));
    await until(() => said().length > 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(said()).toHaveLength(1);
    expect(unhandled).toEqual([]);
  });
});
