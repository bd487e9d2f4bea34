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

  const get = (path: string, key = 'alice') =>
    request(app.getHttpServer()).get(path).set('x-api-key', key);

  it('counts per tracker from the subclass, with throttler headers, message and block', async () => {
    const first = await get('/items').expect(200);
    expect(first.headers).toMatchObject({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset': '10',
    });
    await get('/items').expect(200);
    const denied = await get('/items').expect(429);
    expect(denied.body).toEqual({
      statusCode: 429,
      message: 'ThrottlerException: Too Many Requests',
    });
    expect(denied.headers['retry-after']).toBe('30');
    await get('/items', 'bob').expect(200); // another tracker, its own window
    clock.advance(seconds(29));
    const still = await get('/items').expect(429); // the block outlasts the 10 s window
    expect(still.headers['retry-after']).toBe('1'); // a retry does not start the block over
    clock.advance(seconds(1));
    const after = await get('/items').expect(200); // a fresh window at the first hit after the block
    expect(after.headers['x-ratelimit-remaining']).toBe('1');
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

  it('runs on a MemoryStore given in `storage`, and refuses at start-up a store that cannot count its windows', async () => {
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

    const notMemory = { consume: () => ({ allowed: true, decisions: [] }), close() {} };
    await expect(
      Test.createTestingModule({
        imports: [
          ThrottlerModule.forRoot({
            throttlers: [{ limit: 5, ttl: seconds(60) }],
            storage: notMemory as unknown as MemoryStore,
          }),
        ],
        controllers: [CompatController],
        providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
      }).compile(),
    ).rejects.toThrow(/ThrottlerModule: storage .* cannot count throttler windows/);
  });
});
