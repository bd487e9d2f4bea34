import {
  Controller,
  Get,
  Injectable,
  Module,
  UseGuards,
  type INestApplication,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ManualClock, RateLimit, RateLimitModule } from 'nestjs-holdup';
import {
  ThrottlerGuard,
  ThrottlerModule,
  seconds,
  type ThrottlerModuleOptions,
  type ThrottlerOptionsFactory,
} from 'nestjs-holdup/throttler-compat';
import diagnostics from 'node:diagnostics_channel';
import request from 'supertest';
import type { DecisionEvent } from '../../lib/observability/rate-limit-channels.js';
import { RATE_LIMIT_OWNER } from '../../lib/rate-limit.constants.js';
import { createApp, PLATFORMS, type Platform } from '../utils/create-app.js';

/** Not moved yet: the module's throttler (from forRootAsync) applies. */
@Controller('throttled')
class ThrottledController {
  @Get()
  get() {
    return { ok: true };
  }
}

/** Moved to the native decorator: RateLimitModule's, and only its. */
@Controller('native')
@RateLimit({ name: 'native', rate: '3/min' })
class NativeController {
  @Get()
  get() {
    return { ok: true };
  }
}

/** Where a real app reads its configuration (a ConfigService); here a constant. */
const LIMITS = Symbol('LIMITS');
@Module({ providers: [{ provide: LIMITS, useValue: { perMinute: 2 } }], exports: [LIMITS] })
class LimitsModule {}

const clock = new ManualClock(1_700_000_000_000);

/**
 * Migrating one controller at a time: compat `ThrottlerModule` (configured
 * by `forRootAsync`, its guard global) and native `RateLimitModule` in one
 * app. A route with `@RateLimit()` is charged by the native guard only,
 * the others by the compat guard only: no request is charged twice.
 */
describe.each(PLATFORMS)('throttler-compat beside RateLimitModule (%s)', (platform: Platform) => {
  let app: INestApplication;

  beforeEach(async () => {
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({ clock }),
        ThrottlerModule.forRootAsync({
          imports: [LimitsModule],
          inject: [LIMITS],
          useFactory: (limits: { perMinute: number }): ThrottlerModuleOptions => ({
            throttlers: [{ limit: limits.perMinute, ttl: seconds(60) }],
            clock,
          }),
        }),
      ],
      controllers: [ThrottledController, NativeController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    });
  });
  afterEach(async () => {
    await app.close();
  });

  const get = (path: string) => request(app.getHttpServer()).get(path);

  it('a @RateLimit() route: three admitted by the native limit, though the throttler allows two', async () => {
    for (let i = 0; i < 3; i++) {
      const admitted = await get('/native').expect(200);
      expect(admitted.headers['ratelimit']).toBe(`"native";r=${2 - i};t=20`);
      expect(admitted.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const denied = await get('/native').expect(429);
    expect(denied.body).toMatchObject({ statusCode: 429, message: 'Too Many Requests' });
  });

  it('a route left to throttler: the limit forRootAsync returned, throttler headers only', async () => {
    for (let i = 0; i < 2; i++) {
      const admitted = await get('/throttled').expect(200);
      expect(admitted.headers['x-ratelimit-limit']).toBe('2');
      expect(admitted.headers['x-ratelimit-remaining']).toBe(String(1 - i));
      expect(admitted.headers['ratelimit']).toBeUndefined();
    }
    const denied = await get('/throttled').expect(429);
    expect(denied.body.message).toBe('ThrottlerException: Too Many Requests');
  });

  it("publishes compat decisions under RateLimitModule's owner, so that its metrics count them", async () => {
    const events: DecisionEvent[] = [];
    const listener = (event: unknown) => events.push(event as DecisionEvent);
    diagnostics.subscribe('nestjs-holdup:decision', listener);
    try {
      await get('/throttled').expect(200);
      await get('/throttled').expect(200);
      await get('/throttled').expect(429);
    } finally {
      diagnostics.unsubscribe('nestjs-holdup:decision', listener);
    }
    const owner = app.get(RATE_LIMIT_OWNER);
    expect(owner).toBeDefined();
    expect(events.map((event) => [event.route, event.limits, event.result])).toEqual([
      ['ThrottledController.get', ['default'], 'admitted'],
      ['ThrottledController.get', ['default'], 'admitted'],
      ['ThrottledController.get', ['default'], 'denied'],
    ]);
    for (const event of events) expect(event.owner).toBe(owner);
  });
});

@Controller('guarded')
@UseGuards(ThrottlerGuard)
class GuardedController {
  @Get()
  get() {
    return { ok: true };
  }
}

@Injectable()
class OptionsFromClass implements ThrottlerOptionsFactory {
  createThrottlerOptions(): ThrottlerModuleOptions {
    return { throttlers: [{ limit: 1, ttl: seconds(60) }], clock };
  }
}

describe('throttler-compat: forRootAsync and overrideGuard as apps and their tests write them', () => {
  const boot = async (override: boolean) => {
    const builder = Test.createTestingModule({
      imports: [ThrottlerModule.forRootAsync({ useClass: OptionsFromClass })],
      controllers: [GuardedController],
    });
    if (override) builder.overrideGuard(ThrottlerGuard).useValue({ canActivate: () => true });
    const app = (await builder.compile()).createNestApplication({ logger: false });
    await app.init();
    return app;
  };

  it('forRootAsync({ useClass }) configures @UseGuards(ThrottlerGuard)', async () => {
    const app = await boot(false);
    await request(app.getHttpServer()).get('/guarded').expect(200);
    await request(app.getHttpServer()).get('/guarded').expect(429);
    await app.close();
  });

  it('overrideGuard(ThrottlerGuard).useValue(...) turns limiting off in a test', async () => {
    const app = await boot(true);
    for (let i = 0; i < 5; i++) await request(app.getHttpServer()).get('/guarded').expect(200);
    await app.close();
  });
});
