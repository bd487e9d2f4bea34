/**
 * A clock that steps back while a request runs (an NTP step on `Date.now()`)
 * must not turn an adaptive route's served answer into a 500: the interceptor
 * reports the outcome with a latency of 0 instead of a negative one.
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { AdaptiveRateProvider, ManualClock, RateLimit, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';

const clock = new ManualClock(1_000_000);

@Controller('stepped')
class SteppedController {
  @RateLimit({
    name: 'stepped',
    rate: 100,
    burst: 10,
    key: 'global',
    adaptive: { min: 10, max: 100, jitter: 0, minOutcomes: 1 },
  })
  @Get()
  get(): string {
    clock.advance(-5_000); // the clock steps back while the handler runs
    return 'ok';
  }
}

describe.each(PLATFORMS)(
  'an adaptive route when the clock steps back mid-request (%s)',
  (platform) => {
    let app: INestApplication;
    beforeEach(async () => {
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ clock })],
        controllers: [SteppedController],
      });
    });
    afterEach(() => app.close());

    it('answers what the handler served, and counts it as a fast success', async () => {
      const adaptive = app.get(AdaptiveRateProvider);
      await request(app.getHttpServer()).get('/stepped').expect(200, 'ok');
      clock.advance(10_000);
      expect(adaptive.current('stepped')).toBe(100);
    });
  },
);
