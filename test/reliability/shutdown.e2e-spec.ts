/**
 * Shutdown under load: `app.close()` while requests are waiting on a slow
 * Redis. Every request still gets an answer (admitted by the fail mode or
 * decided by Redis), `close()` returns within a bounded time, nothing
 * rejects unhandled, and the store refuses work after it is closed rather
 * than hanging.
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { RateLimit, RateLimitModule, type RateLimitStore } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp } from '../utils/create-app.js';
import { connectRedisClient, RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { withRedisServer } from '../utils/with-redis-server.js';
import { watchStalls } from '../utils/stall-watch.js';

const TIMEOUT_MS = 100;
const IN_FLIGHT = 30;

@Controller('busy')
class BusyController {
  @RateLimit({ rate: 1_000, burst: 1_000 })
  @Get()
  index() {
    return { ok: true };
  }
}

describe.each([
  [
    'RedisStore',
    (client: Redis): RateLimitStore =>
      new RedisStore({ client, keyPrefix: uniquePrefix('shutdown'), timeoutMs: TIMEOUT_MS }),
  ],
  [
    'TwoTierStore',
    (client: Redis): RateLimitStore =>
      new TwoTierStore({ client, keyPrefix: uniquePrefix('shutdown-tt'), timeoutMs: TIMEOUT_MS }),
  ],
])('shutdown under load, %s', (_name, createStore) => {
  let admin: Redis;
  let app: INestApplication;
  silenceRateLimitLogs();
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 30 },
    quietErrors: true,
    beforeStop: () => admin?.disconnect(),
  });
  beforeEach(async () => {
    admin = await connectRedisClient(redis.server.url);
  });

  it(`${IN_FLIGHT} requests waiting on a slow Redis when the application closes: all answered, close() bounded`, async () => {
    const store = createStore(redis.client);
    let reached = 0;
    const consume = store.consume.bind(store);
    store.consume = (request) => {
      reached++;
      return consume(request);
    };
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store })],
      controllers: [BusyController],
    });
    await app.listen(0, '127.0.0.1');
    const agent = request(app.getHttpServer());

    await admin.call('CLIENT', 'PAUSE', '300', 'WRITE');
    const answers = Array.from({ length: IN_FLIGHT }, () =>
      agent.get('/busy').then(
        (res) => res.status,
        (error: Error) => error.message,
      ),
    );
    // Every request has reached the store (a connection the server has not read yet is the platform's to refuse).
    for (let i = 0; i < 200 && reached < IN_FLIGHT; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(reached).toBe(IN_FLIGHT);

    const stalls = watchStalls(); // the bound below is give or take the machine's own stalls
    const started = performance.now();
    await app.close();
    const closeMs = performance.now() - started;
    const stalledMs = stalls.maxMs;
    stalls.stop();

    const statuses = await Promise.all(answers);
    expect(new Set(statuses)).toEqual(new Set([200])); // failMode open: admitted, never dropped
    expect(closeMs).toBeLessThan(TIMEOUT_MS * 5 + stalledMs);
    // Closed: a late call fails fast instead of hanging on the paused server.
    const late = Promise.resolve().then(() =>
      store.consume({
        checks: [
          {
            key: 'tb|late|*|k=x',
            limit: { algorithm: 'token-bucket', rate: 1, burst: 1 },
            cost: 1,
          },
        ],
        now: Date.now(),
      }),
    );
    await expect(
      Promise.race([
        late.then(
          () => 'answered',
          () => 'refused',
        ),
        new Promise((resolve) => setTimeout(() => resolve('hung'), TIMEOUT_MS * 3)),
      ]),
    ).resolves.not.toBe('hung');
  });
});
