import { jest } from '@jest/globals';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, type RateLimitTypes } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import {
  ConfigModule,
  ConfigService,
  ConfiguredController,
  GuardedController,
  GuardedRouteController,
  RateLimitConfig,
} from './async-config.fixtures.js';

describe.each(PLATFORMS)('forRootAsync and bindGlobally: false (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;

  beforeEach(() => {
    clock = new ManualClock(40_000_000);
    ConfigService.values = {
      CLOCK: clock,
      RATE: '1/min',
      BURST: 2,
      HEADERS: 'both' satisfies RateLimitTypes.HeadersMode,
    };
  });
  afterEach(() => app?.close());

  const get = (path: string) => request(app.getHttpServer()).get(path);

  /** The configured defaults (1/min, burst 2) with 'both' headers. */
  const expectConfiguredDefaults = async (path: string) => {
    const first = await get(path).expect(200);
    expect(first.headers['ratelimit-policy']).toBe('"default";q=2;w=120');
    expect(first.headers['ratelimit']).toBe('"default";r=1;t=60');
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect(first.headers['x-ratelimit-reset']).toBe('60');
    await get(path).expect(200);
    const denied = await get(path).expect(429);
    expect(denied.headers['retry-after']).toBe('60');
    expect(denied.headers['ratelimit']).toBe('"default";r=0;t=60');
    // The configured clock drives time.
    clock.advance(60_000);
    await get(path).expect(200);
  };

  it('useFactory + inject + imports: options come from an imported config provider', async () => {
    const factory = jest.fn(async (config: ConfigService) => ({
      clock: config.get<ManualClock>('CLOCK'),
      defaults: { rate: config.get<string>('RATE'), burst: config.get<number>('BURST') },
      headers: config.get<RateLimitTypes.HeadersMode>('HEADERS'),
    }));
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: factory,
        }),
      ],
      controllers: [ConfiguredController],
    });
    expect(factory).toHaveBeenCalledTimes(1);
    expect(factory.mock.calls[0]![0]).toBeInstanceOf(ConfigService);
    await expectConfiguredDefaults('/configured');
    const decorated = await get('/configured/decorated').expect(200);
    expect(decorated.headers['ratelimit-policy']).toBe('"route";q=1;w=60');
    await get('/configured/decorated').expect(429);
  });

  it('useClass: the options factory class gets its dependencies injected', async () => {
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRootAsync({ imports: [ConfigModule], useClass: RateLimitConfig }),
      ],
      controllers: [ConfiguredController],
    });
    await expectConfiguredDefaults('/configured');
  });

  it('bindGlobally: false (forRootAsync): nothing is limited until RateLimitGuard is bound with @UseGuards', async () => {
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRootAsync({
          bindGlobally: false,
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            clock: config.get<ManualClock>('CLOCK'),
            defaults: { rate: config.get<string>('RATE'), burst: config.get<number>('BURST') },
            headers: config.get<RateLimitTypes.HeadersMode>('HEADERS'),
          }),
        }),
      ],
      controllers: [ConfiguredController, GuardedController, GuardedRouteController],
    });
    // Not bound: neither defaults nor @RateLimit limits apply, and no headers.
    for (let i = 0; i < 5; i++) {
      for (const path of ['/configured', '/configured/decorated', '/guarded-route/off']) {
        const res = await get(path).expect(200);
        expect(res.headers['ratelimit']).toBeUndefined();
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
    // Bound on the class: the configured defaults apply.
    await expectConfiguredDefaults('/guarded');
    // Bound on one route only.
    const on = await get('/guarded-route/on').expect(200);
    expect(on.headers['ratelimit-policy']).toBe('"route";q=1;w=60');
    await get('/guarded-route/on').expect(429);
    await get('/guarded-route/off').expect(200);
  });

  it('bindGlobally: false (forRoot): same', async () => {
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({
          bindGlobally: false,
          clock,
          defaults: { rate: '1/min', burst: 2 },
          headers: 'both',
        }),
      ],
      controllers: [ConfiguredController, GuardedController],
    });
    for (let i = 0; i < 5; i++) {
      const res = await get('/configured').expect(200);
      expect(res.headers['ratelimit']).toBeUndefined();
    }
    await expectConfiguredDefaults('/guarded');
  });
});
