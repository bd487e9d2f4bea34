import type { INestApplication } from '@nestjs/common';
import { ManualClock } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { seconds } from 'nestjs-holdup/throttler-compat';
import { createApp, PLATFORMS, type Platform } from '../utils/create-app.js';
import { RECOMMENDED_OPTIONS } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';
import { withRedisServer } from '../utils/with-redis-server.js';
import { compatModule, type CompatExtras } from './compat-app.js';
import { getter, windowAndBlockScenario } from './compat-scenario.js';

/**
 * The compat app (an app written for @nestjs/throttler, imports changed) on
 * a real redis-server: `storage: new RedisStore(...)` or a `TwoTierStore`,
 * counted by the module's engine and the Redis scripts (anchored windows,
 * `block-window.lua`). Client time, so the ManualClock decides.
 */
describe.each(PLATFORMS)('throttler-compat app on Redis (%s)', (platform: Platform) => {
  let app: INestApplication | undefined;
  let clock: ManualClock;
  const redis = withRedisServer({ beforeStop: () => app?.close() });
  const get = getter(() => app!);

  const boot = async (extras: CompatExtras) => {
    clock = new ManualClock(1_700_000_000_000);
    app = await createApp(platform, compatModule(clock, extras));
  };
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const redisStore = () =>
    new RedisStore({
      client: redis.client,
      keyPrefix: uniquePrefix('compat'),
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
    });

  it('RedisStore: throttler windows, headers, message and blockDuration', async () => {
    await boot({ storage: redisStore() });
    await windowAndBlockScenario(get, clock);
  });

  it('TwoTierStore: windows go straight to Redis, the same answers', async () => {
    const store = new TwoTierStore({
      client: redis.client,
      keyPrefix: uniquePrefix('compat-two-tier'),
      time: 'client',
      timeoutMs: ANSWERED_DEADLINE_MS,
    });
    await boot({ storage: store });
    await windowAndBlockScenario(get, clock);
  });

  it("headers: 'draft' writes RateLimit and RateLimit-Policy instead of throttler's", async () => {
    await boot({ storage: redisStore(), headers: 'draft' });
    const first = await get('/items').expect(200);
    expect(first.headers['ratelimit-policy']).toBe('"default";q=2;w=10');
    expect(first.headers['ratelimit']).toBe('"default";r=1;t=10');
    expect(first.headers['x-ratelimit-limit']).toBeUndefined();
    clock.advance(seconds(4));
    await get('/items').expect(200);
    const denied = await get('/items').expect(429);
    expect(denied.headers['ratelimit']).toBe('"default";r=0;t=30');
    expect(denied.headers['retry-after']).toBe('30');
  });

  it("headers: 'both' writes the two formats", async () => {
    await boot({ storage: redisStore(), headers: 'both' });
    const first = await get('/items').expect(200);
    expect(first.headers).toMatchObject({
      'x-ratelimit-remaining': '1',
      ratelimit: '"default";r=1;t=10',
    });
  });
});

/**
 * A Redis that dies under the compat app: every request is answered, by
 * `failMode` (each test has its own redis-server, killed mid-test).
 */
describe.each(PLATFORMS)('throttler-compat failMode, Redis killed (%s)', (platform: Platform) => {
  let app: INestApplication | undefined;
  const redis = withRedisServer({
    each: true,
    client: { ...RECOMMENDED_OPTIONS, retryStrategy: () => 50 },
    quietErrors: true,
    beforeStop: () => app?.close(),
  });
  const get = getter(() => app!);
  const clock = new ManualClock(1_700_000_000_000);
  /** Redis back (an empty server): the app limits again, from a fresh window. */
  const back = async () => {
    await redis.server.restart();
    await new Promise((resolve) =>
      redis.client.status === 'ready' ? resolve(undefined) : redis.client.once('ready', resolve),
    );
  };
  const options = () => ({
    client: redis.client,
    keyPrefix: uniquePrefix('compat-fail'),
    time: 'client' as const,
    timeoutMs: ANSWERED_DEADLINE_MS,
  });

  it("'open' (the default) admits, without headers", async () => {
    app = await createApp(platform, compatModule(clock, { storage: new RedisStore(options()) }));
    await get('/items').expect(200);
    await redis.server.kill();
    for (let i = 0; i < 4; i++) {
      const response = await get('/items').expect(200);
      expect(response.headers['x-ratelimit-remaining']).toBeUndefined();
    }
    await back();
    const again = await get('/items').expect(200);
    expect(again.headers['x-ratelimit-remaining']).toBe('1');
  });

  it("'closed' answers 503", async () => {
    app = await createApp(
      platform,
      compatModule(clock, { storage: new RedisStore(options()), failMode: 'closed' }),
    );
    await get('/items').expect(200);
    await redis.server.kill();
    for (let i = 0; i < 3; i++) await get('/items').expect(503);
    await back();
    await get('/items').expect(200);
  });

  it("'local' decides on the TwoTierStore's local tier (its share of the window)", async () => {
    const store = new TwoTierStore({ ...options(), localShare: 1 });
    app = await createApp(platform, compatModule(clock, { storage: store, failMode: 'local' }));
    await redis.server.kill();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await get('/items')).status);
    expect(statuses).toEqual([200, 200, 429]);
    await back();
  });
});
