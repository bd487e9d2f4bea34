import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, type FailMode } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { FailModeController, FlakyStore, type StoreBehaviour } from './fail-mode.fixtures.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const UNAVAILABLE = {
  statusCode: 503,
  message: 'Rate limiting is temporarily unavailable',
  error: 'Service Unavailable',
};

/** Let every pending promise job and I/O callback run, so a stray rejection would surface in this test. */
const settle = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe.each(PLATFORMS)('store failures (%s)', (platform) => {
  let app: INestApplication;
  let store: FlakyStore;
  const logs = silenceRateLimitLogs();

  const boot = async (failMode?: FailMode) => {
    store = new FlakyStore();
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({
          store,
          clock: new ManualClock(30_000_000),
          ...(failMode ? { failMode } : {}),
        }),
      ],
      controllers: [FailModeController],
    });
  };
  const get = (path: string) => request(app.getHttpServer()).get(path);

  /** Messages logged by the rate limiter's own logger (context "RateLimit"). */
  const logged = (spy: typeof logs.error) =>
    spy.mock.calls
      .filter(
        (_call, i) =>
          (spy.mock.contexts[i] as unknown as { context?: string }).context === 'RateLimit',
      )
      .map((call) => call[0]);

  afterEach(async () => {
    await app?.close();
  });

  describe.each<StoreBehaviour>(['throw', 'reject'])('a store that fails by %s', (behaviour) => {
    it("failMode 'open' (the default) admits, without rate-limit headers", async () => {
      await boot();
      store.behaviour = behaviour;
      for (let i = 0; i < 8; i++) {
        const res = await get('/fm/module');
        expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ok: true } });
        expect(res.headers['ratelimit']).toBeUndefined();
        expect(res.headers['ratelimit-policy']).toBeUndefined();
      }
      expect(store.consumeCalls).toBe(8);
    });

    it("failMode 'closed' answers 503", async () => {
      await boot('closed');
      store.behaviour = behaviour;
      const res = await get('/fm/module');
      expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: UNAVAILABLE });
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(res.headers['retry-after']).toBeUndefined();
    });

    it.each([
      // [module failMode, route, expected status]
      ['open', '/fm/module', 200],
      ['open', '/fm/open', 200],
      ['open', '/fm/closed', 503],
      ['open', '/fm/mixed', 503],
      ['open', '/fm/open-and-module', 200],
      ['open', '/fm/skipped', 200],
      ['closed', '/fm/module', 503],
      ['closed', '/fm/closed', 503],
      ['closed', '/fm/open', 200],
      ['closed', '/fm/mixed', 503],
      ['closed', '/fm/open-and-module', 503],
      ['closed', '/fm/skipped', 200],
    ] as const)(
      "module failMode '%s': %s answers %i (per-limit override, strictest limit wins)",
      async (failMode, path, status) => {
        await boot(failMode);
        store.behaviour = behaviour;
        const res = await get(path);
        expect(res.status).toBe(status);
        expect(res.body).toEqual(status === 200 ? { ok: true } : UNAVAILABLE);
        // A skipped route never asks the store.
        expect(store.consumeCalls).toBe(path === '/fm/skipped' ? 0 : 1);
      },
    );

    it("a call that skips the 'closed' limit is decided by the fail modes of the limits it keeps", async () => {
      await boot('open');
      store.behaviour = behaviour;
      expect((await get('/fm/mixed-skippable')).status).toBe(503);
      const internal = await request(app.getHttpServer())
        .get('/fm/mixed-skippable')
        .set('x-internal', 'yes');
      expect({ status: internal.status, body: internal.body }).toEqual({
        status: 200,
        body: { ok: true },
      });
      expect(store.consumeCalls).toBe(2);
    });

    it('logs the failure once per burst, then the recovery, then a new burst', async () => {
      await boot();
      store.behaviour = behaviour;
      for (let i = 0; i < 3; i++) await get('/fm/module').expect(200);
      await get('/fm/closed').expect(503);
      expect(logged(logs.error)).toEqual([
        `Rate-limit store failed; applying failMode until it recovers: ${behaviour === 'throw' ? 'store exploded' : 'store unreachable'}`,
      ]);
      expect(logged(logs.log)).toEqual([]);

      store.behaviour = 'ok';
      for (let i = 0; i < 3; i++) await get('/fm/module').expect(200);
      expect(logged(logs.log)).toEqual(['Rate-limit store recovered after 4 failed decision(s)']);
      expect(logged(logs.error)).toHaveLength(1);

      store.behaviour = behaviour;
      await get('/fm/module').expect(200);
      await get('/fm/module').expect(200);
      expect(logged(logs.error)).toHaveLength(2);
      store.behaviour = 'ok';
      await get('/fm/module').expect(200);
      expect(logged(logs.log)).toEqual([
        'Rate-limit store recovered after 4 failed decision(s)',
        'Rate-limit store recovered after 2 failed decision(s)',
      ]);
    });

    it('after recovery limiting resumes where it was: failed requests were not charged', async () => {
      await boot();
      await get('/fm/module').expect(200);
      await get('/fm/module').expect(200);
      store.behaviour = behaviour;
      for (let i = 0; i < 10; i++) await get('/fm/module').expect(200);
      store.behaviour = 'ok';
      const expected = ['"default";r=2;t=1', '"default";r=1;t=1', '"default";r=0;t=1'];
      for (const ratelimit of expected) {
        const res = await get('/fm/module').expect(200);
        expect(res.headers['ratelimit']).toBe(ratelimit);
      }
      await get('/fm/module').expect(429);
    });
  });

  it('a failure wrapped in RateLimitStoreError is logged with its cause', async () => {
    await boot();
    store.behaviour = 'throw-wrapped';
    await get('/fm/module').expect(200);
    await get('/fm/closed').expect(503);
    expect(logged(logs.error)).toEqual([
      'Rate-limit store failed; applying failMode until it recovers: Redis timed out (cause: ETIMEDOUT 10.0.0.7:6379)',
    ]);
  });

  it.each<FailMode>(['open', 'closed'])(
    "no unhandled rejection when the store rejects (failMode '%s')",
    async (failMode) => {
      await boot(failMode);
      store.behaviour = 'reject';
      for (let i = 0; i < 5; i++) {
        await get('/fm/module').expect(failMode === 'open' ? 200 : 503);
        await get('/fm/mixed').expect(503);
      }
      await settle();
      // Jest fails the running test on an unhandled rejection (its own handler on the real
      // process; a listener on the sandboxed `process` never sees them), and settle() gives
      // one the time to surface here. Checking the promises themselves as well:
      expect(store.rejections).toHaveLength(10);
      expect(store.rejections.every((rejection) => rejection.handled)).toBe(true);
    },
  );
});
