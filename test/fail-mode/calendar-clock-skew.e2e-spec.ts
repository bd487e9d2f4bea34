/**
 * Issue 26, item 8: calendar windows on Redis server time. The store computes
 * the calendar boundaries from the module clock (Lua has no time zone
 * database) and sends the window before the current one, the current one and
 * the next; the script picks the one its own clock (Redis `TIME`) is in. When
 * the two clocks disagree by more than a window, Redis time is in none of
 * them. Before the fix the script then counted in the last window sent, which
 * had already ended: the count was written with an expiry in the past, gone at
 * once, and every request was admitted, silently. Now such a decision is a
 * store failure: the fail mode decides, logged once per burst.
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import {
  ManualClock,
  RateLimit,
  RateLimitModule,
  type FailMode,
  type RateLimitStore,
} from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { createApp } from '../utils/create-app.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

@Controller('daily')
class DailyController {
  @RateLimit({
    name: 'daily',
    rate: '2/day',
    algorithm: 'fixed-window',
    calendar: { timeZone: 'Europe/Paris' },
  })
  @Get()
  get(): { ok: true } {
    return { ok: true };
  }
}

const DAY = 86_400_000;

describe.each([
  [
    'RedisStore',
    (client: Redis, _clock: ManualClock): RateLimitStore =>
      // time: 'server' is the default; said here because it is the point.
      new RedisStore({
        client,
        keyPrefix: uniquePrefix('cal-skew'),
        time: 'server',
        timeoutMs: ANSWERED_DEADLINE_MS,
      }),
  ],
  [
    'TwoTierStore',
    (client: Redis, clock: ManualClock): RateLimitStore =>
      new TwoTierStore({
        client,
        keyPrefix: uniquePrefix('cal-skew-tt'),
        time: 'server',
        clock,
        timeoutMs: ANSWERED_DEADLINE_MS,
      }),
  ],
])(
  'calendar windows on Redis time, %s, with a module clock more than a window away',
  (_store, createStore) => {
    let client: Redis;
    let app: INestApplication | undefined;
    let clock: ManualClock;
    const logs = silenceRateLimitLogs();

    beforeAll(async () => {
      client = await connectSharedClient();
    });
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });
    afterAll(() => client.quit());

    const boot = async (failMode: FailMode, offsetMs: number) => {
      clock = new ManualClock(Date.now() + offsetMs);
      const store = createStore(client, clock);
      app = await createApp('express', {
        imports: [RateLimitModule.forRoot({ store, clock, failMode })],
        controllers: [DailyController],
      });
    };
    const status = async () => (await request(app!.getHttpServer()).get('/daily')).status;
    const statuses = async (n: number) => {
      const seen: number[] = [];
      for (let i = 0; i < n; i++) seen.push(await status());
      return seen;
    };
    const storeFailures = () =>
      logs.messages('error').filter((line) => line.startsWith('Rate-limit store failed'));

    it('clocks a few hours apart (within a window) still agree: 2 admitted, then 429', async () => {
      await boot('closed', -3 * 3_600_000);
      expect(await statuses(4)).toEqual([200, 200, 429, 429]);
      expect(storeFailures()).toEqual([]);
    });

    it.each([
      ['three days behind', -3 * DAY],
      ['three days ahead', 3 * DAY],
    ])("module clock %s, failMode 'closed': 503, never an admission", async (_name, offset) => {
      await boot('closed', offset);
      expect(await statuses(5)).toEqual([503, 503, 503, 503, 503]);
      expect(storeFailures()).toEqual([
        expect.stringMatching(/Redis time .* is outside the calendar windows/),
      ]);
    });

    it("module clock three days behind, failMode 'open': admitted by the fail mode, logged once for the burst, exact again once the clocks agree", async () => {
      await boot('open', -3 * DAY);
      expect(await statuses(5)).toEqual([200, 200, 200, 200, 200]);
      expect(storeFailures()).toHaveLength(1);
      clock.set(Date.now());
      expect(await statuses(3)).toEqual([200, 200, 429]);
      expect(logs.messages('log')).toContain(
        'Rate-limit store recovered after 5 failed decision(s)',
      );
    });
  },
);
