/**
 * The clock steps back (an NTP correction, a VM restored from a snapshot):
 * no request fails, no bucket refills because of it, and once the clock
 * moves forward again the buckets refill at their rate, on every store.
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import {
  ManualClock,
  MemoryStore,
  RateLimit,
  RateLimitModule,
  type RateLimitStore,
} from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp } from '../utils/create-app.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';

@Controller('steps')
class StepsController {
  @RateLimit({ rate: '1/min', burst: 2 })
  @Get()
  index() {
    return { ok: true };
  }
}

const HOUR = 3_600_000;

describe.each([
  ['MemoryStore', (_client: Redis, _clock: ManualClock): RateLimitStore => new MemoryStore()],
  [
    'RedisStore',
    (client: Redis, _clock: ManualClock): RateLimitStore =>
      new RedisStore({
        client,
        keyPrefix: uniquePrefix('steps'),
        time: 'client',
        timeoutMs: ANSWERED_DEADLINE_MS,
      }),
  ],
  [
    'TwoTierStore',
    (client: Redis, clock: ManualClock): RateLimitStore =>
      new TwoTierStore({
        client,
        keyPrefix: uniquePrefix('steps-tt'),
        time: 'client',
        clock,
        timeoutMs: ANSWERED_DEADLINE_MS,
      }),
  ],
])('the clock stepping back, %s', (_name, createStore) => {
  let client: Redis;
  let app: INestApplication;
  afterEach(async () => {
    await app?.close();
    client?.disconnect();
  });

  it('an hour back: nothing fails, nothing refills; forward again: refills at the rate', async () => {
    client = await connectSharedClient();
    const clock = new ManualClock(1_700_000_000_000);
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store: createStore(client, clock), clock })],
      controllers: [StepsController],
    });
    const status = async () => (await request(app.getHttpServer()).get('/steps')).status;
    expect([await status(), await status(), await status()]).toEqual([200, 200, 429]);

    clock.advance(-HOUR);
    expect([await status(), await status()]).toEqual([429, 429]);

    clock.advance(HOUR + 60_000); // one minute past the last decision: one token
    expect([await status(), await status()]).toEqual([200, 429]);
  });
});
