/**
 * `ipv6Subnet`: every address key groups IPv6 clients by that prefix (/64 by
 * default): the client address, a header or key function whose value is an
 * address (keeping their own marker), and `clientAddress()` in a key function.
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { RecordingStore } from '../keys/keys.fixtures.js';
import {
  createApp,
  platformTrustProxy,
  PLATFORMS,
  type CreateAppOptions,
} from '../utils/create-app.js';
import { ProxiedController } from './proxies.fixtures.js';

const PATHS: Record<string, string> = { realIp: 'real-ip', addressTenant: 'address-tenant' };
const key = (handler: string, identity: string) =>
  `tb|default|ProxiedController.${handler}:proxied/${PATHS[handler] ?? handler}|${identity}`;

describe.each(PLATFORMS)('ipv6Subnet (%s)', (platform) => {
  let app: INestApplication | undefined;
  let store: RecordingStore;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const boot = async (
    options: Omit<RateLimitModuleOptions, 'store' | 'clock'> = {},
    platformOptions: CreateAppOptions = {},
  ) => {
    store = new RecordingStore();
    app = await createApp(
      platform,
      {
        imports: [
          RateLimitModule.forRoot({ ...options, store, clock: new ManualClock(10_000_000) }),
        ],
        controllers: [ProxiedController],
      },
      platformOptions,
    );
  };
  /** Status of each request to `path`, in order; `header` set to each value (undefined: not sent). */
  const statuses = async (path: string, header: string, values: (string | undefined)[]) => {
    const out: number[] = [];
    for (const value of values) {
      const req = request(app!.getHttpServer()).get(path);
      if (value !== undefined) req.set(header, value);
      out.push((await req).status);
    }
    return out;
  };

  describe("the client address ('ip'), module trustProxy: true", () => {
    it('default /64: one bucket per /64, another /64 is another client', async () => {
      await boot({ trustProxy: true });
      expect(
        await statuses('/proxied/ip', 'X-Forwarded-For', [
          '2001:db8:1:2::a',
          '2001:db8:1:2::b',
          '2001:db8:1:3::a',
          '2001:db8:1:2::c',
        ]),
      ).toEqual([200, 200, 200, 429]);
      expect(store.keys).toEqual([
        key('ip', '2001:db8:1:2::/64'),
        key('ip', '2001:db8:1:2::/64'),
        key('ip', '2001:db8:1:3::/64'),
        key('ip', '2001:db8:1:2::/64'),
      ]);
    });

    it('ipv6Subnet: 56: the /64s of one /56 are one client, the next /56 is another', async () => {
      await boot({ trustProxy: true, ipv6Subnet: 56 });
      expect(
        await statuses('/proxied/ip', 'X-Forwarded-For', [
          '2001:db8:1:2::a',
          '2001:db8:1:3::a',
          '2001:db8:1:100::a',
          '2001:db8:1:ff::1',
        ]),
      ).toEqual([200, 200, 200, 429]);
      expect(store.keys).toEqual([
        key('ip', '2001:db8:1:0::/56'),
        key('ip', '2001:db8:1:0::/56'),
        key('ip', '2001:db8:1:100::/56'),
        key('ip', '2001:db8:1:0::/56'),
      ]);
    });

    it('ipv6Subnet: 128: every address is its own client', async () => {
      await boot({ trustProxy: true, ipv6Subnet: 128 });
      expect(
        await statuses('/proxied/ip', 'X-Forwarded-For', [
          '2001:db8:1:2::a',
          '2001:db8:1:2::b',
          '2001:db8:1:2::a',
          '2001:db8:1:2::a',
        ]),
      ).toEqual([200, 200, 200, 429]);
      expect(store.keys).toEqual([
        key('ip', '2001:db8:1:2:0:0:0:a'),
        key('ip', '2001:db8:1:2:0:0:0:b'),
        key('ip', '2001:db8:1:2:0:0:0:a'),
        key('ip', '2001:db8:1:2:0:0:0:a'),
      ]);
    });

    it('the address the platform resolved (module trustProxy not set) is grouped by ipv6Subnet too', async () => {
      await boot({ ipv6Subnet: 48 }, platformTrustProxy('loopback'));
      expect(
        await statuses('/proxied/ip', 'X-Forwarded-For', [
          '2001:db8:1:2::a',
          '2001:db8:1:ffff::a',
          '2001:db8:1:2::b',
        ]),
      ).toEqual([200, 200, 429]);
      expect(store.keys).toEqual(Array(3).fill(key('ip', '2001:db8:1::/48')));
    });
  });

  describe('keys whose value is an address are grouped, under their own marker', () => {
    beforeEach(() => boot({ trustProxy: true, ipv6Subnet: 56 }));

    it("'header:x-real-ip'", async () => {
      expect(
        await statuses('/proxied/real-ip', 'X-Real-IP', [
          '2001:db8:1:2::a',
          '2001:db8:1:3::b',
          '2001:db8:1:4::c',
          '2001:db8:1:100::a',
        ]),
      ).toEqual([200, 200, 429, 200]);
      expect(store.keys).toEqual([
        ...Array(3).fill(key('realIp', 'h=2001:db8:1:0::/56')),
        key('realIp', 'h=2001:db8:1:100::/56'),
      ]);
    });

    it('a key function answering an IPv6 address', async () => {
      expect(
        await statuses('/proxied/fn', 'X-Client', [
          '2001:db8:1:2::a',
          '2001:db8:1:3::b',
          '2001:db8:1:4::c',
          '2001:db8:1:100::a',
        ]),
      ).toEqual([200, 200, 429, 200]);
      expect(store.keys).toEqual([
        ...Array(3).fill(key('fn', 'k=2001:db8:1:0::/56')),
        key('fn', 'k=2001:db8:1:100::/56'),
      ]);
    });
  });

  describe('clientAddress(context) in a key function: the address as the ip key sees it', () => {
    it("module trustProxy: 1: the nearest hop's answer, grouped by ipv6Subnet", async () => {
      await boot({ trustProxy: 1, ipv6Subnet: 56 });
      // The left-most entries are the client's own words: ignored.
      const forwarded = [
        '2001:db8:9::1, 2001:db8:1:2::a',
        '2001:db8:9::2, 2001:db8:1:3::a',
        '2001:db8:1:4::a',
        '2001:db8:1:100::a',
        undefined,
      ];
      expect(await statuses('/proxied/acme', 'X-Forwarded-For', forwarded)).toEqual([
        200, 200, 429, 200, 200,
      ]);
      expect(store.keys).toEqual([
        ...Array(3).fill(key('acme', 'k=acme:2001:db8:1:0::/56')),
        key('acme', 'k=acme:2001:db8:1:100::/56'),
        key('acme', 'k=acme:127.0.0.1'),
      ]);
    });

    it('module trustProxy not set: what the platform resolved, grouped by the default /64', async () => {
      await boot({}, platformTrustProxy('loopback'));
      expect(
        await statuses('/proxied/acme', 'X-Forwarded-For', [
          '2001:db8:1:2::a',
          '2001:db8:1:2::b',
          '2001:db8:1:3::a',
        ]),
      ).toEqual([200, 200, 200]);
      expect(store.keys).toEqual([
        key('acme', 'k=acme:2001:db8:1:2::/64'),
        key('acme', 'k=acme:2001:db8:1:2::/64'),
        key('acme', 'k=acme:2001:db8:1:3::/64'),
      ]);
    });

    it('an address followed by more (`${clientAddress(ctx)}:${tenant}`) is a key of its own, not that address', async () => {
      await boot({ trustProxy: true });
      const get = (forwardedFor: string, tenant: string) =>
        request(app!.getHttpServer())
          .get('/proxied/address-tenant')
          .set('X-Forwarded-For', forwardedFor)
          .set('X-Tenant', tenant);
      await get('203.0.113.5', 't1').expect(200);
      await get('203.0.113.5', 't1').expect(200);
      await get('203.0.113.5', 't1').expect(429);
      // Another tenant from the same address: its own bucket (the text after ':' is not a port to drop).
      await get('203.0.113.5', 't2').expect(200);
      await get('2001:db8:1:2::a', 't1').expect(200);
      expect(store.keys).toEqual([
        ...Array(3).fill(key('addressTenant', 'k=203.0.113.5:t1')),
        key('addressTenant', 'k=203.0.113.5:t2'),
        key('addressTenant', 'k=2001:db8:1:2::/64:t1'),
      ]);
    });

    it('module trustProxy: false over a trusting platform: the socket address', async () => {
      await boot({ trustProxy: false }, platformTrustProxy('loopback'));
      await request(app!.getHttpServer())
        .get('/proxied/acme')
        .set('X-Forwarded-For', '2001:db8:1:2::a')
        .expect(200);
      expect(store.keys).toEqual([key('acme', 'k=acme:127.0.0.1')]);
    });
  });

  describe('a bad ipv6Subnet fails the bootstrap, naming the option', () => {
    it.each([
      [0, '0'],
      [129, '129'],
      ['64', '"64"'],
      [1.5, '1.5'],
      [Number.NaN, 'NaN'],
    ])('%p', async (ipv6Subnet, shown) => {
      const booting = createApp(platform, {
        imports: [RateLimitModule.forRoot({ ipv6Subnet: ipv6Subnet as number })],
        controllers: [ProxiedController],
      });
      const error = await booting.then(
        async (started) => {
          await started.close();
          return undefined;
        },
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe(
        `RateLimitModule: ipv6Subnet must be a prefix length, an integer from 1 to 128, got ${shown}`,
      );
    });
  });
});
