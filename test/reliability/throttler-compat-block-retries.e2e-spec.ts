/**
 * A client blocked by the throttler-compat `blockDuration` that keeps
 * retrying once a second (as test/reliability/block-retries.e2e-spec.ts does
 * on the native module): the block ends when it said it would, retries do
 * not extend it. 2 per 10 s window, a 10 s block, 32 s of retries on the
 * module's ManualClock, through HTTP, on memory and on Redis.
 */
import request from 'supertest';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ManualClock } from 'nestjs-holdup';
import { Throttle, ThrottlerGuard, ThrottlerModule, seconds } from 'nestjs-holdup/throttler-compat';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { storesOfKind } from '../utils/stores.js';

@Controller('blocked')
class BlockedController {
  @Throttle({ default: { limit: 2, ttl: seconds(10), blockDuration: seconds(10) } })
  @Get()
  guarded() {
    return { ok: true };
  }
}

const report = process.env.HOLDUP_REPORT === '1';

describe.each(['memory', 'redis'] as const)(
  'throttler-compat: a blocked client retrying (%s)',
  (kind) => {
    const makeStore = storesOfKind(kind);
    describe.each(PLATFORMS)('%s', (platform) => {
      let app: INestApplication;
      let clock: ManualClock;
      beforeEach(async () => {
        clock = new ManualClock(1_700_000_000_000);
        app = await createApp(platform, {
          imports: [
            ThrottlerModule.forRoot({
              throttlers: [{ limit: 100, ttl: seconds(60) }],
              clock,
              storage: makeStore(`compat-block-retries-${kind}`),
            }),
          ],
          controllers: [BlockedController],
          providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
        });
      });
      afterEach(() => app.close());
      const get = () => request(app.getHttpServer()).get('/blocked');

      it('the block ends after 10 s whatever the retries; Retry-After counts down, never jumps back', async () => {
        expect((await get()).status).toBe(200);
        expect((await get()).status).toBe(200);
        const first = await get();
        expect([first.status, first.headers['retry-after']]).toEqual([429, '10']);
        const seen: string[] = [];
        for (let second = 1; second <= 32; second++) {
          clock.advance(1_000);
          const res = await get();
          seen.push(res.status === 200 ? '200' : `429:${res.headers['retry-after']}`);
        }
        if (report) console.log(`${kind} ${platform}: ${seen.join(' ')}`);
        // Denied with 9 ... 1 s left, then the block is over: a fresh window (2 admitted),
        // the third hit over the limit blocks 10 s again (throttler's semantics), never longer.
        const countdown = Array.from({ length: 9 }, (_, n) => `429:${9 - n}`);
        const cycle = ['200', '200', '429:10', ...countdown];
        expect(seen).toEqual([...countdown, ...cycle, ...cycle].slice(0, 32));
        expect(seen.filter((s) => s === '200')).toHaveLength(4);
      });
    });
  },
);
