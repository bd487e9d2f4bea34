import { networkInterfaces } from 'node:os';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  ManualClock,
  RateLimitGuard,
  RateLimitModule,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import {
  FakeAuthGuard,
  KeysController,
  RecordingStore,
  UserKeyController,
} from './keys.fixtures.js';

const DIGEST = '[A-Za-z0-9_-]{43}'; // sha256, base64url

/** The IPv6 loopback tests need an IPv6 loopback interface. */
const HAS_IPV6_LOOPBACK = Object.values(networkInterfaces()).some((list) =>
  list?.some((nic) => nic.address === '::1'),
);
const itIpv6 = HAS_IPV6_LOOPBACK ? it : it.skip;

describe.each(PLATFORMS)('key strategies (%s)', (platform) => {
  let app: INestApplication;
  let store: RecordingStore;

  const boot = async (options: Omit<RateLimitModuleOptions, 'store' | 'clock'> = {}) => {
    store = new RecordingStore();
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ ...options, store, clock: new ManualClock(10_000_000) })],
      controllers: [KeysController],
    });
  };
  afterEach(() => app?.close());

  const get = (path: string, headers: Record<string, string> = {}) => {
    const req = request(app.getHttpServer()).get(path);
    for (const [name, value] of Object.entries(headers)) req.set(name, value);
    return req;
  };
  /** Status of each request, in order. */
  const statuses = async (path: string, headerSets: Record<string, string>[]) => {
    const out: number[] = [];
    for (const headers of headerSets) out.push((await get(path, headers)).status);
    return out;
  };

  describe("'ip'", () => {
    it('trustProxy false (default): a spoofed X-Forwarded-For is ignored, all requests share the socket bucket', async () => {
      await boot();
      const xff = (ip: string) => ({ 'X-Forwarded-For': ip });
      expect(
        await statuses('/keys/ip', [
          xff('203.0.113.1'),
          xff('203.0.113.2'),
          xff('203.0.113.3'),
          {},
        ]),
      ).toEqual([200, 200, 429, 429]);
      // The socket address is 127.0.0.1 or ::ffff:127.0.0.1 depending on the listener: both are one client.
      expect(new Set(store.keys)).toEqual(
        new Set(['tb|default|KeysController.ip:keys/ip|127.0.0.1']),
      );
    });

    it('trustProxy true: the left-most forwarded address is the client', async () => {
      await boot({ trustProxy: true });
      const a = { 'X-Forwarded-For': '203.0.113.1, 10.0.0.1' };
      const b = { 'X-Forwarded-For': '203.0.113.2, 10.0.0.1' };
      expect(await statuses('/keys/ip', [a, a, a, b, b, b, {}])).toEqual([
        200, 200, 429, 200, 200, 429, 200,
      ]);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.ip:keys/ip|203.0.113.1'),
        ...Array(3).fill('tb|default|KeysController.ip:keys/ip|203.0.113.2'),
        'tb|default|KeysController.ip:keys/ip|127.0.0.1',
      ]);
    });

    it('trustProxy true: IPv6 clients are grouped by /64, and a non-address is skipped', async () => {
      await boot({ trustProxy: true });
      const xff = (ip: string) => ({ 'X-Forwarded-For': ip });
      expect(
        await statuses('/keys/ip', [
          xff('2001:db8:1:2::1'),
          xff('2001:DB8:1:2:ffff::9'),
          xff('[2001:db8:1:2::7]:443'),
        ]),
      ).toEqual([200, 200, 429]);
      expect(await statuses('/keys/ip', [xff('2001:db8:1:3::1')])).toEqual([200]);
      expect(await statuses('/keys/ip', [xff('not-an-ip, 198.51.100.4')])).toEqual([200]);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.ip:keys/ip|2001:db8:1:2::/64'),
        'tb|default|KeysController.ip:keys/ip|2001:db8:1:3::/64',
        'tb|default|KeysController.ip:keys/ip|198.51.100.4',
      ]);
    });

    it('trustProxy 1 (hop count): the address the nearest proxy saw is the client, whatever the client wrote further left', async () => {
      await boot({ trustProxy: 1 });
      const spoofed = (left: string) => ({ 'X-Forwarded-For': `${left}, 203.0.113.7` });
      expect(
        await statuses('/keys/ip', [spoofed('1.1.1.1'), spoofed('2.2.2.2'), spoofed('3.3.3.3')]),
      ).toEqual([200, 200, 429]);
      expect(await statuses('/keys/ip', [{ 'X-Forwarded-For': '203.0.113.8' }, {}])).toEqual([
        200, 200,
      ]);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.ip:keys/ip|203.0.113.7'),
        'tb|default|KeysController.ip:keys/ip|203.0.113.8',
        'tb|default|KeysController.ip:keys/ip|127.0.0.1',
      ]);
    });

    it('trustProxy 2 (hop count): two proxies are trusted', async () => {
      await boot({ trustProxy: 2 });
      await get('/keys/ip', { 'X-Forwarded-For': '198.51.100.1, 203.0.113.7' }).expect(200);
      await get('/keys/ip', { 'X-Forwarded-For': '6.6.6.6, 198.51.100.1, 203.0.113.7' }).expect(
        200,
      );
      await get('/keys/ip', { 'X-Forwarded-For': '7.7.7.7, 198.51.100.1, 203.0.113.7' }).expect(
        429,
      );
      expect(store.keys).toEqual(
        Array(3).fill('tb|default|KeysController.ip:keys/ip|198.51.100.1'),
      );
    });

    it('trustProxy list with every loopback form: the right-most untrusted forwarded address is the client', async () => {
      await boot({ trustProxy: ['127.0.0.1', '::1', '::ffff:127.0.0.1'] });
      const xff = (value: string) => ({ 'X-Forwarded-For': value });
      expect(
        await statuses('/keys/ip', [
          xff('203.0.113.9'),
          xff('192.0.2.1, 203.0.113.9'),
          xff('203.0.113.9'),
        ]),
      ).toEqual([200, 200, 429]);
      expect(await statuses('/keys/ip', [xff('203.0.113.10')])).toEqual([200]);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.ip:keys/ip|203.0.113.9'),
        'tb|default|KeysController.ip:keys/ip|203.0.113.10',
      ]);
    });

    it('trustProxy CIDR list: trusted proxies are skipped from the right', async () => {
      await boot({ trustProxy: ['127.0.0.0/8', '10.0.0.0/8'] });
      await get('/keys/ip', { 'X-Forwarded-For': '192.0.2.50, 203.0.113.9, 10.1.2.3' }).expect(200);
      await get('/keys/ip', { 'X-Forwarded-For': '203.0.113.9, 10.9.9.9' }).expect(200);
      await get('/keys/ip', { 'X-Forwarded-For': '203.0.113.9' }).expect(429);
      expect(store.keys).toEqual(Array(3).fill('tb|default|KeysController.ip:keys/ip|203.0.113.9'));
    });

    it('trustProxy list given only as the IPv4-mapped form trusts the loopback socket too', async () => {
      await boot({ trustProxy: ['::ffff:127.0.0.1'] });
      await get('/keys/ip', { 'X-Forwarded-For': '203.0.113.11' }).expect(200);
      expect(store.last()).toEqual(['tb|default|KeysController.ip:keys/ip|203.0.113.11']);
    });

    it('trustProxy list not containing the socket address: X-Forwarded-For is ignored', async () => {
      await boot({ trustProxy: ['::1', '10.0.0.0/8'] });
      const xff = (value: string) => ({ 'X-Forwarded-For': value });
      expect(
        await statuses('/keys/ip', [xff('203.0.113.1'), xff('203.0.113.2'), xff('203.0.113.3')]),
      ).toEqual([200, 200, 429]);
      expect(new Set(store.keys)).toEqual(
        new Set(['tb|default|KeysController.ip:keys/ip|127.0.0.1']),
      );
    });
  });

  describe('socket address forms', () => {
    /** Listen for real on `host` and return a base URL reaching it through `connectTo`. */
    const listen = async (host: string, connectTo: string) => {
      await app.listen(0, host);
      const { port } = app.getHttpServer().address() as { port: number };
      return `http://${connectTo}:${port}`;
    };

    itIpv6(
      'IPv4-mapped (dual-stack listener, client on 127.0.0.1): one client, trusted by a 127.0.0.1 entry',
      async () => {
        await boot({ trustProxy: ['127.0.0.1'] });
        const url = await listen('::', '127.0.0.1');
        const socket = await request(url).get('/keys/socket').expect(200);
        expect(socket.body).toEqual({ remoteAddress: '::ffff:127.0.0.1' });
        await request(url).get('/keys/ip').set('X-Forwarded-For', '203.0.113.20').expect(200);
        await request(url).get('/keys/ip').expect(200);
        expect(store.keys).toEqual([
          'tb|default|KeysController.ip:keys/ip|203.0.113.20',
          'tb|default|KeysController.ip:keys/ip|127.0.0.1',
        ]);
      },
    );

    itIpv6('IPv6 loopback (::1): grouped by /64; trusted only when listed', async () => {
      await boot({ trustProxy: ['::1'] });
      const url = await listen('::1', '[::1]');
      const socket = await request(url).get('/keys/socket').expect(200);
      expect(socket.body).toEqual({ remoteAddress: '::1' });
      await request(url).get('/keys/ip').set('X-Forwarded-For', '203.0.113.21').expect(200);
      await request(url).get('/keys/ip').expect(200);
      expect(store.keys).toEqual([
        'tb|default|KeysController.ip:keys/ip|203.0.113.21',
        'tb|default|KeysController.ip:keys/ip|0:0:0:0::/64',
      ]);
    });

    itIpv6('IPv6 loopback not listed: X-Forwarded-For ignored', async () => {
      await boot({ trustProxy: ['127.0.0.1'] });
      const url = await listen('::1', '[::1]');
      await request(url).get('/keys/ip').set('X-Forwarded-For', '203.0.113.22').expect(200);
      expect(store.keys).toEqual(['tb|default|KeysController.ip:keys/ip|0:0:0:0::/64']);
    });
  });

  describe('module defaults.key', () => {
    it('is the key of every limit that names none (route and module-wide limits)', async () => {
      await boot({
        defaults: { rate: 1, key: 'header:x-api-key' },
        limits: [{ name: 'cap', rate: '1/min', burst: 3 }],
      });
      const k = { 'x-api-key': 'k1' };
      expect(await statuses('/keys/default-key', [k, k, k])).toEqual([200, 200, 429]);
      expect(store.keys).toEqual([
        'tb|cap|KeysController.defaultKey:keys/default-key|h=k1',
        'tb|route|KeysController.defaultKey:keys/default-key|h=k1',
        'tb|cap|KeysController.defaultKey:keys/default-key|h=k1',
        'tb|route|KeysController.defaultKey:keys/default-key|h=k1',
        'tb|cap|KeysController.defaultKey:keys/default-key|h=k1',
        'tb|route|KeysController.defaultKey:keys/default-key|h=k1',
      ]);
      // A limit naming its own key keeps it.
      await get('/keys/global', k).expect(200);
      expect(store.last(2)).toEqual([
        'tb|cap|KeysController.global:keys/global|h=k1',
        'tb|default|KeysController.global:keys/global|global',
      ]);
    });
  });

  describe("'header:<name>'", () => {
    beforeEach(() => boot());

    it('one bucket per header value (header name matched case-insensitively)', async () => {
      const k1 = { 'x-api-key': 'key-1' };
      const k2 = { 'X-API-KEY': 'key-2' };
      expect(await statuses('/keys/header', [k1, k1, k1, k2, k2, k2])).toEqual([
        200, 200, 429, 200, 200, 429,
      ]);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.header:keys/header|h=key-1'),
        ...Array(3).fill('tb|default|KeysController.header:keys/header|h=key-2'),
      ]);
    });

    it('falls back to the client address when the header is absent or empty, in a bucket no header value can reach', async () => {
      expect(await statuses('/keys/header', [{}, { 'x-api-key': '' }, {}])).toEqual([
        200, 200, 429,
      ]);
      // A header value equal to the address (or to the whole fallback identity) is another bucket.
      expect(
        await statuses('/keys/header', [
          { 'x-api-key': '127.0.0.1' },
          { 'x-api-key': 'ip=127.0.0.1' },
        ]),
      ).toEqual([200, 200]);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.header:keys/header|127.0.0.1'),
        'tb|default|KeysController.header:keys/header|h=127.0.0.1',
        'tb|default|KeysController.header:keys/header|h=ip=127.0.0.1',
      ]);
    });
  });

  describe("'global'", () => {
    it('one bucket for every caller, whatever address or headers', async () => {
      await boot({ trustProxy: true });
      const results = await statuses('/keys/global', [
        { 'X-Forwarded-For': '203.0.113.1' },
        { 'X-Forwarded-For': '203.0.113.2', 'x-api-key': 'k' },
        { 'X-Forwarded-For': '203.0.113.3' },
      ]);
      expect(results).toEqual([200, 200, 429]);
      expect(store.keys).toEqual(
        Array(3).fill('tb|default|KeysController.global:keys/global|global'),
      );
    });
  });

  describe('key function', () => {
    beforeEach(() => boot());

    it('one bucket per returned value', async () => {
      const a = { 'x-tenant': 'tenant-a' };
      const b = { 'x-tenant': 'tenant-b' };
      expect(await statuses('/keys/fn', [a, a, a, b])).toEqual([200, 200, 429, 200]);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.fn:keys/fn|k=tenant-a'),
        'tb|default|KeysController.fn:keys/fn|k=tenant-b',
      ]);
    });

    it('undefined or null falls back to the client address; 0 is a real key', async () => {
      expect(await statuses('/keys/fn', [{}, {}, {}])).toEqual([200, 200, 429]);
      expect(await statuses('/keys/computed', [{}, {}, {}])).toEqual([200, 200, 429]);
      await get('/keys/computed?n=0').expect(200);
      expect(store.keys).toEqual([
        ...Array(3).fill('tb|default|KeysController.fn:keys/fn|127.0.0.1'),
        ...Array(3).fill('tb|default|KeysController.computed:keys/computed|127.0.0.1'),
        'tb|default|KeysController.computed:keys/computed|k=0',
      ]);
    });
  });

  describe('hostile identities', () => {
    beforeEach(async () => {
      await boot();
      // Node's default limit is 16 KiB of headers; raise it so a 1 MB header reaches the app.
      (app.getHttpServer() as { maxHeaderSize?: number }).maxHeaderSize = 4 * 1024 * 1024;
    });

    it('a 1 MB header value is a bounded, distinct bucket', async () => {
      const huge = 'a'.repeat(1_000_000);
      const other = `${'a'.repeat(999_999)}b`;
      expect(
        await statuses('/keys/header', [
          { 'x-api-key': huge },
          { 'x-api-key': huge },
          { 'x-api-key': huge },
        ]),
      ).toEqual([200, 200, 429]);
      expect(await statuses('/keys/header', [{ 'x-api-key': other }])).toEqual([200]);
      const prefix = 'tb|default|KeysController.header:keys/header|h#';
      for (const key of store.keys) {
        expect(key).toMatch(new RegExp(`^${prefix.replace(/[|.]/g, '\\$&')}${DIGEST}$`));
        expect(key.length).toBe(prefix.length + 43);
      }
      expect(new Set(store.keys).size).toBe(2);
      expect(store.keys[0]).toBe(store.keys[2]);
      // The app is still fine for everyone else.
      await get('/keys/header', { 'x-api-key': 'small' }).expect(200);
      expect(store.last()).toEqual(['tb|default|KeysController.header:keys/header|h=small']);
    });

    it('a 2 MB identity returned by a key function is bounded too', async () => {
      expect(await statuses('/keys/computed?big=ab', [{}, {}, {}])).toEqual([200, 200, 429]);
      await get('/keys/computed?big=ac').expect(200);
      for (const key of store.keys)
        expect(key).toMatch(
          new RegExp(`^tb\\|default\\|KeysController\\.computed:keys\\/computed\\|k#${DIGEST}$`),
        );
      expect(new Set(store.keys).size).toBe(2);
    });

    it('NUL bytes, unicode, spaces and separators give distinct, bounded buckets', async () => {
      const values = [
        'a\u0000b',
        'a\u0000c',
        '\u{1F600}',
        '\u00e9',
        'e\u0301',
        'a b',
        'a|b',
        '#abc',
        '=abc',
      ];
      for (const value of values) {
        const path = `/keys/raw?k=${encodeURIComponent(value)}`;
        expect(await statuses(path, [{}, {}, {}])).toEqual([200, 200, 429]);
      }
      const distinct = [...new Set(store.keys)];
      expect(distinct).toHaveLength(values.length);
      for (const key of distinct) {
        expect(key).toMatch(
          new RegExp(
            `^tb\\|default\\|KeysController\\.raw:keys\\/raw\\|k(#${DIGEST}|=[\\x21-\\x7e]{1,128})$`,
          ),
        );
      }
      // Short printable ASCII (no space) is kept readable, '=' marked; everything else is digested ('#'),
      // so '#abc' or '=abc' sent raw cannot pose as a digest.
      expect(distinct.filter((key) => key.includes('|k='))).toEqual([
        'tb|default|KeysController.raw:keys/raw|k=a|b',
        'tb|default|KeysController.raw:keys/raw|k=#abc',
        'tb|default|KeysController.raw:keys/raw|k==abc',
      ]);
    });

    it('a latin-1 header value (non-ASCII) is digested, not stored raw', async () => {
      await get('/keys/header', { 'x-api-key': 'caf\u00e9' }).expect(200);
      await get('/keys/header', { 'x-api-key': 'cafe' }).expect(200);
      expect(store.keys[0]).toMatch(
        new RegExp(`^tb\\|default\\|KeysController\\.header:keys\\/header\\|h#${DIGEST}$`),
      );
      expect(store.keys[1]).toBe('tb|default|KeysController.header:keys/header|h=cafe');
    });
  });
});

describe.each(PLATFORMS)("'user' key behind an authentication guard (%s)", (platform) => {
  let app: INestApplication;
  let store: RecordingStore;

  beforeEach(async () => {
    store = new RecordingStore();
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({ bindGlobally: false, store, clock: new ManualClock(10_000_000) }),
      ],
      controllers: [UserKeyController],
      // Global guards run in registration order: authentication first.
      providers: [
        { provide: APP_GUARD, useClass: FakeAuthGuard },
        { provide: APP_GUARD, useExisting: RateLimitGuard },
      ],
    });
  });
  afterEach(() => app.close());

  const get = (headers: Record<string, string> = {}) => {
    const req = request(app.getHttpServer()).get('/user');
    for (const [name, value] of Object.entries(headers)) req.set(name, value);
    return req;
  };

  it('one bucket per user id, whatever the address', async () => {
    const alice = { Authorization: 'Bearer alice' };
    await get(alice).expect(200);
    await get({ ...alice, 'X-Forwarded-For': '203.0.113.1' }).expect(200);
    await get(alice).expect(429);
    await get({ Authorization: 'Bearer bob' }).expect(200);
    expect(store.keys).toEqual([
      ...Array(3).fill('tb|default|UserKeyController.user:user|u=alice'),
      'tb|default|UserKeyController.user:user|u=bob',
    ]);
  });

  it('uses `sub` when the user has no `id`', async () => {
    await get({ 'X-Sub': 'carol' }).expect(200);
    await get({ 'X-Sub': 'carol' }).expect(200);
    await get({ 'X-Sub': 'carol' }).expect(429);
    expect(store.keys).toEqual(Array(3).fill('tb|default|UserKeyController.user:user|u=carol'));
  });

  it('falls back to the client address without a user (or without an id), separate from user buckets', async () => {
    await get().expect(200);
    await get({ 'X-Empty-User': '1' }).expect(200);
    await get().expect(429);
    // A user whose id looks like the fallback identity is still a user bucket.
    await get({ Authorization: 'Bearer ip=127.0.0.1' }).expect(200);
    expect(store.keys).toEqual([
      ...Array(3).fill('tb|default|UserKeyController.user:user|127.0.0.1'),
      'tb|default|UserKeyController.user:user|u=ip=127.0.0.1',
    ]);
  });
});
