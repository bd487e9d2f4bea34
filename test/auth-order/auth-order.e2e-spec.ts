import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import {
  ManualClock,
  MemoryStore,
  RateLimitModule,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import type { ConsumeRequest } from 'nestjs-holdup/store';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import {
  BoundTooController,
  MixedController,
  OrdersController,
  ProfileController,
  SettingsController,
  UnauthenticatedController,
} from './auth-order.fixtures.js';

/** Records the bucket keys of each store call. */
class RecordingStore extends MemoryStore {
  readonly calls: string[][] = [];
  override consume(request: ConsumeRequest) {
    this.calls.push(request.checks.map((check) => check.key.slice(check.key.lastIndexOf('|') + 1)));
    return super.consume(request);
  }
}

/**
 * `key: 'user'` with the auth guard bound on the controller or the route
 * (Passport's usual pattern): global guards run before route guards, so the
 * limits keyed by user must wait for the route's own guards.
 */
describe.each(PLATFORMS)("'user' keys behind the route's own auth guard (%s)", (platform) => {
  let app: INestApplication;
  let store: RecordingStore;
  const logs = silenceRateLimitLogs();

  const boot = async (options: Omit<RateLimitModuleOptions, 'store' | 'clock'> = {}) => {
    store = new RecordingStore();
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ ...options, store, clock: new ManualClock(10_000_000) })],
      controllers: [
        ProfileController,
        OrdersController,
        MixedController,
        BoundTooController,
        UnauthenticatedController,
        SettingsController,
      ],
    });
  };
  const as = (path: string, user?: string) => {
    const req = request(app.getHttpServer()).get(path);
    return user === undefined ? req : req.set('Authorization', `Bearer ${user}`);
  };
  const statuses = async (path: string, users: (string | undefined)[]) => {
    const out: string[] = [];
    for (const user of users) out.push(`${user ?? 'anonymous'}:${(await as(path, user)).status}`);
    return out;
  };

  afterEach(async () => {
    await app?.close();
  });

  it.each(['/profile', '/orders'])(
    '%s: each user has their own bucket (auth guard on the class / on the route)',
    async (path) => {
      await boot();
      expect(await statuses(path, ['alice', 'alice', 'alice', 'bob', 'bob', 'bob'])).toEqual([
        'alice:200',
        'alice:200',
        'alice:429',
        'bob:200',
        'bob:200',
        'bob:429',
      ]);
      expect(new Set(store.calls.flat())).toEqual(new Set(['u=alice', 'u=bob']));
      expect(logs.warn).not.toHaveBeenCalled();
    },
  );

  it('a request the auth guard refuses is not charged to any user bucket', async () => {
    await boot();
    expect(await statuses('/profile', [undefined, undefined, undefined, 'alice', 'alice'])).toEqual(
      ['anonymous:401', 'anonymous:401', 'anonymous:401', 'alice:200', 'alice:200'],
    );
  });

  it('an address limit still runs before authentication: refused logins use it up', async () => {
    await boot();
    // per-ip has a burst of 4: four anonymous requests (401) exhaust it, so alice is refused before the auth guard runs.
    expect(await statuses('/mixed', [undefined, undefined, undefined, undefined, 'alice'])).toEqual(
      ['anonymous:401', 'anonymous:401', 'anonymous:401', 'anonymous:401', 'alice:429'],
    );
    expect(store.calls.every((keys) => keys.length === 1 && keys[0] === '127.0.0.1')).toBe(true);
  });

  it('both parts report in one set of headers, and a user denial refunds the address limit (all or nothing)', async () => {
    await boot();
    const first = await as('/mixed', 'alice');
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"per-ip";q=4;w=240, "per-user";q=2;w=120');
    expect(first.headers['ratelimit']).toMatch(/^"per-ip";r=3;t=\d+, "per-user";r=1;t=\d+$/);
    expect((await as('/mixed', 'alice')).status).toBe(200);
    const denied = await as('/mixed', 'alice');
    expect(denied.status).toBe(429);
    expect(denied.headers['retry-after']).toBe('60');
    expect(denied.headers['ratelimit']).toMatch(/"per-user";r=0/);
    // per-ip took 3 and gave the denied one back: 2 left, for bob.
    expect(await statuses('/mixed', ['bob', 'bob', 'bob'])).toEqual([
      'bob:200',
      'bob:200',
      'bob:429',
    ]);
  });

  it('the first part admitted by a store failure (failMode open): the headers report the second part alone', async () => {
    await boot();
    const consume = store.consume.bind(store);
    store.consume = (request: ConsumeRequest) => {
      if (request.checks.some((check) => check.key.endsWith('|127.0.0.1')))
        throw new Error('down for addresses');
      return consume(request);
    };
    // The store failure is logged (silenced by logs).
    const res = await as('/mixed', 'alice');
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"per-user";q=2;w=120');
    expect(res.headers['ratelimit']).toMatch(/^"per-user";r=1;t=\d+$/);
  });

  it('RateLimitGuard also bound on the route (before the auth guard): one evaluation, user limit after auth', async () => {
    await boot();
    expect(await statuses('/bound-too', ['alice', 'alice', 'alice', 'bob'])).toEqual([
      'alice:200',
      'alice:200',
      'alice:429',
      'bob:200',
    ]);
    expect(store.calls).toEqual([['u=alice'], ['u=alice'], ['u=alice'], ['u=bob']]);
  });

  it('a user key that finds no user falls back to the address, and says so once for the route', async () => {
    await boot();
    expect(await statuses('/unauthenticated', ['alice', 'bob', undefined])).toEqual([
      'alice:200',
      'bob:200',
      'anonymous:200',
    ]);
    expect(new Set(store.calls.flat())).toEqual(new Set(['127.0.0.1']));
    const said = logs.warn.mock.calls
      .map(([message]) => String(message))
      .filter((message) => message.includes("key 'user' found no req.user"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('UnauthenticatedController.index, limit "per-user"');
    expect(said[0]).toContain('@UseGuards()');
  });

  it("module defaults keyed by user wait for the route's auth guard as well", async () => {
    await boot({ defaults: { rate: '1/min', burst: 1, key: 'user' } });
    expect(await statuses('/settings', ['alice', 'alice', 'bob'])).toEqual([
      'alice:200',
      'alice:429',
      'bob:200',
    ]);
    expect(store.calls).toEqual([['u=alice'], ['u=alice'], ['u=bob']]);
    expect(logs.warn).not.toHaveBeenCalled();
  });
});
