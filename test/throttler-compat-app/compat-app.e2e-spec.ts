import type { INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ManualClock, MemoryStore } from 'nestjs-holdup';
import {
  ThrottlerGuard,
  ThrottlerModule,
  ThrottlerStorage,
  getOptionsToken,
  seconds,
  type ThrottlerStorageRecord,
} from 'nestjs-holdup/throttler-compat';
import request from 'supertest';
import { PLATFORMS, createApp, type Platform } from '../utils/create-app.js';
import { CompatController, compatModule } from './compat-app.js';
import { getter, windowAndBlockScenario } from './compat-scenario.js';

/**
 * An app written for @nestjs/throttler, run on the compat entry point with
 * only its imports changed: a guard subclass overriding `getTracker`,
 * `@Throttle()` with `blockDuration`, `@SkipThrottle()`, and the overrides its
 * tests make (`overrideGuard`, `overrideProvider(getOptionsToken())`).
 * Time is a ManualClock: the window and the block are moved through, not slept.
 */
describe.each(PLATFORMS)('throttler-compat app on %s', (platform: Platform) => {
  let app: INestApplication;
  let clock: ManualClock;

  beforeEach(async () => {
    clock = new ManualClock(1_700_000_000_000);
    app = await createApp(platform, compatModule(clock));
  });
  afterEach(async () => {
    await app.close();
  });

  const get = getter(() => app);

  it('counts per tracker from the subclass, with throttler headers, message and block', async () => {
    await windowAndBlockScenario(get, clock);
  });

  it('skips @SkipThrottle() routes: no charge, no headers', async () => {
    for (let i = 0; i < 8; i++) {
      const response = await get('/health').expect(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('throttler-compat: what throttler users override in their tests', () => {
  const clock = new ManualClock(1_700_000_000_000);

  it('overrideProvider(getOptionsToken()) applies; the class @Throttle() still wins', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ThrottlerModule.forRoot([{ limit: 1, ttl: seconds(60) }])],
      controllers: [CompatController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    })
      .overrideProvider(getOptionsToken())
      .useValue({
        throttlers: [{ limit: 100, ttl: seconds(60) }],
        errorMessage: 'slow down',
        clock,
      })
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    // The class's @Throttle({ default: { limit: 2 } }) still wins over the module's 100.
    await request(app.getHttpServer()).get('/items').expect(200);
    await request(app.getHttpServer()).get('/items').expect(200);
    const denied = await request(app.getHttpServer()).get('/items').expect(429);
    expect(denied.body.message).toBe('slow down');
    await app.close();
  });

  it('uses a ThrottlerStorage given in `storage` as it is', async () => {
    const calls: string[] = [];
    const storage: ThrottlerStorage = {
      increment: async (key, ttl, limit, blockDuration, name): Promise<ThrottlerStorageRecord> => {
        calls.push(`${ttl}/${limit}/${blockDuration}/${name}`);
        return { totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 };
      },
    };
    const moduleRef = await Test.createTestingModule({
      imports: [ThrottlerModule.forRoot({ throttlers: [{ limit: 5, ttl: seconds(60) }], storage })],
      controllers: [CompatController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await request(app.getHttpServer()).get('/items').expect(200);
    expect(calls).toEqual(['10000/2/30000/default']);
    await app.close();
  });

  it('runs on a MemoryStore given in `storage`', async () => {
    const store = new MemoryStore({ maxKeys: 1000 });
    const moduleRef = await Test.createTestingModule({
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [{ limit: 5, ttl: seconds(60) }],
          storage: store,
          clock,
        }),
      ],
      controllers: [CompatController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await request(app.getHttpServer()).get('/items').expect(200);
    expect(store.size).toBe(1);
    await app.close();
  });

  it.each([
    [
      { headers: 'legacy' },
      /option "headers" must be 'throttler', 'draft' or 'both', got "legacy"/,
    ],
    [{ failMode: 'half-open' }, /option "failMode" must be 'open', 'closed' or 'local'/],
    [{ failMode: 'local' }, /option "failMode" 'local' needs a store that can decide locally/],
    [
      { storage: { get: () => 1 } },
      /option "storage" must be a ThrottlerStorage .* or a RateLimitStore/,
    ],
    [
      { failMode: 'closed', storage: { increment: async () => ({}) } },
      /option "failMode" applies to a RateLimitStore in storage/,
    ],
  ])('refuses %j at start-up, naming the option', async (extras, message) => {
    await expect(
      Test.createTestingModule({
        imports: [
          ThrottlerModule.forRoot({
            throttlers: [{ limit: 5, ttl: seconds(60) }],
            ...(extras as object),
          }),
        ],
        controllers: [CompatController],
        providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
      }).compile(),
    ).rejects.toThrow(message);
  });
  it.each([
    [{ limit: 'many', ttl: seconds(60) }, /"throttlers\[0\]\.limit" must be a non-negative number/],
    [
      { name: 'burst', limit: 5, ttl: -1 },
      /"throttlers\[0\] \("burst"\)\.ttl" must be a non-negative number/,
    ],
    [{ limit: 5, ttl: 1_000, blockDuration: NaN }, /"throttlers\[0\]\.blockDuration"/],
  ])(
    'refuses the throttler %j at start-up, naming it and the option',
    async (throttler, message) => {
      const moduleRef = await Test.createTestingModule({
        imports: [ThrottlerModule.forRoot([throttler as never])],
        controllers: [CompatController],
        providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await expect(app.init()).rejects.toThrow(message);
      await app.close();
    },
  );
});
