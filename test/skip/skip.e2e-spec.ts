/**
 * `skip` (per limit and module-wide) and `allowList`, on Express and Fastify:
 * a skipped limit is not charged and not in the headers; the others apply as
 * usual; a predicate that throws never stops the limiter from limiting.
 */
import request from 'supertest';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';
import { SkipController } from './skip.controller.js';

describe.each(ALL_STORES)('skip and allowList (%s store)', (storeKind) => {
  const makeStore = storesOfKind(storeKind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication | undefined;

    const boot = async (options: RateLimitModuleOptions = {}) => {
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            clock: new ManualClock(1_700_000_000_000),
            store: makeStore(`skip-${storeKind}-${platform}`),
            ...options,
          }),
        ],
        controllers: [SkipController],
      });
    };
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });
    const get = (path: string, headers: Record<string, string> = {}) =>
      request(app!.getHttpServer()).get(path).set(headers);

    it('a skipped limit is neither charged nor in the headers', async () => {
      await boot();
      for (let i = 0; i < 5; i++) {
        const res = await get('/skip/one', { 'x-internal': 'yes' });
        expect([res.status, res.headers['ratelimit'], res.headers['ratelimit-policy']]).toEqual([
          200,
          undefined,
          undefined,
        ]);
      }
      expect((await get('/skip/one')).headers['ratelimit']).toBe('"default";r=1;t=60'); // the burst of 2 untouched
      expect((await get('/skip/one')).status).toBe(200);
      expect((await get('/skip/one')).status).toBe(429);
      expect((await get('/skip/one', { 'x-internal': 'yes' })).status).toBe(200);
    });

    it('two limits, one skipped (asynchronously): the other still applies, alone in the headers', async () => {
      await boot();
      const partner = { 'x-partner': 'acme' };
      for (const r of [2, 1, 0]) {
        const res = await get('/skip/two', partner);
        expect([res.status, res.headers['ratelimit-policy'], res.headers['ratelimit']]).toEqual([
          200,
          '"all";q=3;w=180',
          `"all";r=${r};t=60`,
        ]);
      }
      const denied = await get('/skip/two', partner);
      expect([denied.status, denied.headers['ratelimit']]).toEqual([429, '"all";r=0;t=60']);
      // Without the header both apply, and "all" (shared with the partner calls above) is spent.
      const plain = await get('/skip/two');
      expect([plain.status, plain.headers['ratelimit-policy']]).toEqual([
        429,
        '"all";q=3;w=180, "partners";q=1;w=60',
      ]);
    });

    it('a skip predicate that throws does not skip: the limit applies', async () => {
      await boot();
      expect((await get('/skip/broken')).status).toBe(200);
      expect((await get('/skip/broken')).status).toBe(429);
    });

    it('with a skipped limit beside it, a limit that counts failures gives back the right bucket', async () => {
      await boot();
      const internal = { 'x-internal': 'yes' };
      for (let i = 0; i < 4; i++)
        expect((await get('/skip/login', { ...internal, 'x-password': 'right' })).status).toBe(200);
      expect((await get('/skip/login', { ...internal, 'x-password': 'wrong' })).status).toBe(401);
      expect((await get('/skip/login', { ...internal, 'x-password': 'wrong' })).status).toBe(401);
      const denied = await get('/skip/login', { ...internal, 'x-password': 'right' });
      expect([denied.status, denied.headers['ratelimit']]).toEqual([429, '"login";r=0;t=60']);
    });

    it("the module's skip: no limit applies to the calls it skips (e.g. a health-check user agent)", async () => {
      await boot({
        skip: (ctx) => ctx.switchToHttp().getRequest().headers['user-agent'] === 'kube-probe/1.30',
      });
      for (let i = 0; i < 4; i++) {
        const res = await get('/skip/one', { 'user-agent': 'kube-probe/1.30' });
        expect([res.status, res.headers['ratelimit']]).toEqual([200, undefined]);
      }
      expect((await get('/skip/one')).headers['ratelimit']).toBe('"default";r=1;t=60');
    });

    it('allowList: addresses and CIDRs no limit applies to, resolved with trustProxy', async () => {
      await boot({ trustProxy: true, allowList: ['10.0.0.0/8', '2001:db8::5'] });
      for (const client of ['10.1.2.3', '10.255.0.1', '2001:db8::5', '::ffff:10.0.0.9']) {
        for (let i = 0; i < 3; i++) {
          const res = await get('/skip/one', { 'x-forwarded-for': client });
          expect([client, res.status, res.headers['ratelimit']]).toEqual([client, 200, undefined]);
        }
      }
      for (const client of ['11.0.0.1', '2001:db8::6']) {
        expect((await get('/skip/one', { 'x-forwarded-for': client })).headers['ratelimit']).toBe(
          '"default";r=1;t=60',
        );
      }
    });

    it("skipped calls are published on the decision channel as 'skipped', with the limits they skipped", async () => {
      await boot({ allowList: ['127.0.0.1', '::1'] });
      const seen: { result: string; limits: readonly string[] }[] = [];
      const listener = (event: unknown) =>
        seen.push(event as { result: string; limits: readonly string[] });
      subscribe('nestjs-holdup:decision', listener);
      try {
        await get('/skip/two');
      } finally {
        unsubscribe('nestjs-holdup:decision', listener);
      }
      expect(seen.map(({ result, limits }) => ({ result, limits }))).toEqual([
        { result: 'skipped', limits: ['all', 'partners'] },
      ]);
    });

    it.each([
      [
        'skip',
        { skip: 'yes' },
        'RateLimitModule: skip must be a function (context) => boolean, got "yes"',
      ],
      [
        'allowList entry',
        { allowList: ['10.0.0.0/33'] },
        'RateLimitModule: allowList entry "10.0.0.0/33" is not an IP address or CIDR',
      ],
      [
        'allowList',
        { allowList: '10.0.0.0/8' },
        'RateLimitModule: allowList must be a list of addresses and CIDRs, got "10.0.0.0/8"',
      ],
    ])('bad module %s fails at start-up', async (_case, options, message) => {
      await expect(boot(options as unknown as RateLimitModuleOptions)).rejects.toThrow(message);
    });
  });
});
