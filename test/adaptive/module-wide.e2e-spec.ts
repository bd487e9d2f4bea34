/**
 * Adaptive limits declared module-wide (`limits`, `defaults`) apply to routes
 * nobody decorated, so no `@RateLimit()` binds the interceptor that reports
 * their outcomes: the module binds it globally in that case (and only then),
 * and a route that also binds it itself reports each outcome once.
 */
import {
  Controller,
  Get,
  InternalServerErrorException,
  type INestApplication,
  type ModuleMetadata,
} from '@nestjs/common';
import request from 'supertest';
import {
  AdaptiveRateProvider,
  RateLimit,
  RateLimitModule,
  type RateLimitOptions,
} from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { behaviour, clock } from './flaky.controller.js';

const adaptive = { min: 10, max: 100, jitter: 0, minOutcomes: 5 };
const MODULE_LIMIT: RateLimitOptions = {
  name: 'module-wide',
  rate: 100,
  burst: 10,
  key: 'global',
  adaptive,
};

@Controller('plain')
class PlainController {
  @Get()
  get(): string {
    if (behaviour.mode === 'fail') throw new InternalServerErrorException();
    return 'ok';
  }

  /** Binds the interceptor itself (adaptive limit of its own) while the module binds it globally too. */
  @RateLimit({ name: 'own', rate: 100, burst: 10, key: 'global', adaptive })
  @Get('own')
  own(): string {
    if (behaviour.mode === 'fail') throw new InternalServerErrorException();
    return 'ok';
  }
}

describe.each(PLATFORMS)('module-wide adaptive limits (%s)', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    behaviour.mode = 'ok';
    await app?.close();
    app = undefined;
  });

  const boot = async (
    options: { limits?: RateLimitOptions[]; defaults?: RateLimitOptions },
    metadata: ModuleMetadata = {},
  ) => {
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ clock, ...options })],
      controllers: [PlainController],
      ...metadata,
    });
    return app.get(AdaptiveRateProvider);
  };
  const fail = async (path: string, times: number) => {
    behaviour.mode = 'fail';
    for (let i = 0; i < times; i++) await request(app!.getHttpServer()).get(path).expect(500);
    behaviour.mode = 'ok';
  };

  it.each([
    ['limits', { limits: [MODULE_LIMIT] }],
    ['defaults', { defaults: MODULE_LIMIT }],
  ])(
    'reports the outcomes of undecorated routes to an adaptive limit from the module %s',
    async (_option, options) => {
      const provider = await boot(options);
      expect(provider.current('module-wide')).toBe(100); // opens the window
      await fail('/plain', 6);
      clock.advance(1000);
      expect(provider.current('module-wide')).toBe(80);
    },
  );

  it('reports each outcome once on a route that binds the interceptor too', async () => {
    const provider = await boot({ limits: [MODULE_LIMIT] });
    provider.current('module-wide');
    provider.current('own');
    // 3 failures: under minOutcomes (5) unless each were counted twice.
    await fail('/plain/own', 3);
    clock.advance(1000);
    expect(provider.current('module-wide')).toBe(100);
    expect(provider.current('own')).toBe(100);
  });
});

describe('module-wide adaptive limits with bindGlobally: false', () => {
  const logs = silenceRateLimitLogs();

  it('says once at start-up that their outcomes are reported only where the interceptor is bound', async () => {
    const app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ clock, bindGlobally: false, limits: [MODULE_LIMIT] })],
      controllers: [PlainController],
    });
    await app.close();
    const lines = logs.warn.mock.calls
      .map(([message]) => String(message))
      .filter((message) => message.includes('RateLimitInterceptor'));
    expect(lines).toEqual([
      expect.stringContaining(
        'bindGlobally is false and the module limits or defaults are adaptive',
      ),
    ]);
  });
});
