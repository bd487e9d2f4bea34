import type { ExecutionContext } from '@nestjs/common';
import type { KeyStrategy } from '../interfaces/rate-limit-options.interface.js';
import { boundedIdentity } from './bounded-key.js';
import { clientAddress } from './client-address-helper.js';
import {
  compileKeyStrategy,
  type Identify,
  type KeyEnvironment,
  type RequestLike,
} from './key-strategy.js';
import { compileRequestAddress } from './request-address.js';

/** The guard passes Nest's context through; the built-in strategies only read the request. */
const context = { kind: 'test context', getType: () => 'http' } as unknown as ExecutionContext;

const from = (address: string | undefined, extra: Partial<RequestLike> = {}): RequestLike => ({
  socket: { remoteAddress: address },
  ...extra,
});

const environment = (overrides: Partial<KeyEnvironment> = {}): KeyEnvironment => ({
  address: compileRequestAddress({
    trustProxy: undefined,
    ipv6Subnet: 64,
    onUntrustedForward: () => undefined,
  }),
  ipv6Subnet: 64,
  where: 'OrdersController.search, limit "default"',
  onUserFallback: () => undefined,
  ...overrides,
});

function compile(strategy: KeyStrategy, overrides: Partial<KeyEnvironment> = {}): Identify {
  const identify = compileKeyStrategy(strategy, environment(overrides));
  if (!identify) throw new Error(`not compiled: ${String(strategy)}`);
  return identify;
}

describe('compileKeyStrategy', () => {
  it.each(['cookie', 'header:', 'HEADER:x-api-key', 'ip ', '', 42, null, undefined, {}])(
    'does not recognise %p',
    (strategy) => {
      expect(compileKeyStrategy(strategy as never, environment())).toBeUndefined();
    },
  );

  describe("'ip'", () => {
    const ip = compile('ip');

    it('the socket address, canonical, unmarked (no other identity can be an address)', () => {
      expect(ip(context, from('203.0.113.7'))).toBe('203.0.113.7');
      expect(ip(context, from('::ffff:203.0.113.7'))).toBe('203.0.113.7');
    });

    it('IPv6 by its /64', () => {
      expect(ip(context, from('2001:db8:1:2:3:4:5:6'))).toBe('2001:db8:1:2::/64');
      expect(ip(context, from('2001:db8:1:2:ffff::1'))).toBe('2001:db8:1:2::/64');
    });

    it("Fastify's raw socket when there is no socket on the request", () => {
      expect(ip(context, { raw: { socket: { remoteAddress: '198.51.100.4' } } })).toBe(
        '198.51.100.4',
      );
      expect(
        ip(context, {
          socket: { remoteAddress: '203.0.113.7' },
          raw: { socket: { remoteAddress: '198.51.100.4' } },
        }),
      ).toBe('203.0.113.7');
    });

    it("the platform's req.ip when there is one (Express and Fastify honour their own trust-proxy setting there)", () => {
      expect(
        ip(
          context,
          from('10.0.0.2', { ip: '203.0.113.9', headers: { 'x-forwarded-for': '203.0.113.9' } }),
        ),
      ).toBe('203.0.113.9');
    });

    it("the module's trustProxy, when set, over req.ip", () => {
      const behindOneProxy = compile('ip', {
        address: compileRequestAddress({
          trustProxy: 1,
          ipv6Subnet: 64,
          onUntrustedForward: () => undefined,
        }),
      });
      const request = from('10.0.0.2', {
        ip: '10.0.0.2',
        headers: { 'x-forwarded-for': '1.1.1.1, 203.0.113.9' },
      });
      expect(behindOneProxy(context, request)).toBe('203.0.113.9');
    });

    it('no usable address is an error naming the limit, never one bucket shared by every caller', () => {
      for (const request of [undefined, {}, from(undefined), from('not an address')]) {
        expect(() => ip(context, request)).toThrow(
          /OrdersController.search, limit "default": this call has no client address to key by .*give the limit a key function/,
        );
      }
    });

    it("'connection': one identity per socket, kept as long as the socket", () => {
      const connection = compile('connection');
      const a = { socket: { remoteAddress: '203.0.113.7' } };
      const b = { socket: { remoteAddress: '203.0.113.7' } };
      const first = connection(context, a);
      expect(first).toMatch(/^c=[0-9a-f]{12}\.[0-9a-z]+$/);
      expect(connection(context, a)).toBe(first);
      expect(connection(context, { socket: a.socket, headers: {} })).toBe(first);
      expect(connection(context, b)).not.toBe(first);
      expect(connection(context, { raw: { socket: b.socket } })).toBe(connection(context, b));
      expect(() => connection(context, undefined)).toThrow(/key 'connection' found no connection/);
    });
  });

  it("'global': one bucket for everybody", () => {
    const global = compile('global');
    expect(global(context, from('203.0.113.7'))).toBe('global');
    expect(global(context, undefined)).toBe('global');
  });

  describe("'user'", () => {
    const user = compile('user');

    it('user.id, else user.sub, bounded, marked u', () => {
      expect(user(context, from('203.0.113.7', { user: { id: 'alice' } }))).toBe('u=alice');
      expect(user(context, from('203.0.113.7', { user: { sub: 'bob' } }))).toBe('u=bob');
      expect(user(context, from('203.0.113.7', { user: { id: 'alice', sub: 'bob' } }))).toBe(
        'u=alice',
      );
      expect(user(context, from('203.0.113.7', { user: { id: 42 } }))).toBe('u=42');
      expect(user(context, from('203.0.113.7', { user: { id: 0 } }))).toBe('u=0');
      expect(user(context, from('203.0.113.7', { user: { id: 'x'.repeat(300) } }))).toBe(
        `u${boundedIdentity('x'.repeat(300))}`,
      );
    });

    it('falls back to the address without a user or an id, and says so (the caller decides how often)', () => {
      let fallbacks = 0;
      const onUserFallback = () => void fallbacks++;
      for (const user of [undefined, null, {}, { id: null }, { id: '' }, { sub: '' }]) {
        expect(
          compile('user', { onUserFallback })(
            context,
            from('203.0.113.7', { user: user as RequestLike['user'] }),
          ),
        ).toBe('203.0.113.7');
      }
      expect(() => compile('user', { onUserFallback })(context, undefined)).toThrow(
        /no client address/,
      );
      expect(fallbacks).toBe(7);
      compile('user', { onUserFallback })(context, from('203.0.113.7', { user: { id: 'alice' } }));
      expect(fallbacks).toBe(7);
    });
  });

  describe("'header:<name>'", () => {
    it('the first value of that header (name case-insensitive), bounded, marked h', () => {
      const apiKey = compile('header:X-Api-Key');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': 'k-123' } }))).toBe(
        'h=k-123',
      );
      expect(
        apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': ['k-1', 'k-2'] } })),
      ).toBe('h=k-1');
      expect(
        apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': 'a key with spaces' } })),
      ).toBe(`h${boundedIdentity('a key with spaces')}`);
    });

    it('falls back to the address when the header is absent or empty', () => {
      const apiKey = compile('header:x-api-key');
      expect(apiKey(context, from('203.0.113.7'))).toBe('203.0.113.7');
      expect(apiKey(context, from('203.0.113.7', { headers: {} }))).toBe('203.0.113.7');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': '' } }))).toBe(
        '203.0.113.7',
      );
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': [] } }))).toBe(
        '203.0.113.7',
      );
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-other': 'k-123' } }))).toBe(
        '203.0.113.7',
      );
    });
  });

  describe('a function of the context', () => {
    it('its value, bounded, marked k; it gets the context it is called with', () => {
      const seen: ExecutionContext[] = [];
      const identify = compile((ctx) => {
        seen.push(ctx);
        return 'tenant-7';
      });
      expect(identify(context, from('203.0.113.7'))).toBe('k=tenant-7');
      expect(seen).toEqual([context]);
      expect(seen[0]).toBe(context);
    });

    it('numbers as text, long or unsafe values hashed', () => {
      expect(compile(() => 7)(context, undefined)).toBe('k=7');
      expect(compile(() => 0)(context, undefined)).toBe('k=0');
      expect(compile(() => 'é')(context, undefined)).toBe(`k${boundedIdentity('é')}`);
    });

    it.each([undefined, null, ''])('falls back to the address when it returns %p', (value) => {
      expect(compile(() => value)(context, from('203.0.113.7'))).toBe('203.0.113.7');
    });
  });

  describe('keys that are IP addresses are grouped like the client address', () => {
    it.each([
      ['2001:db8:1:2:3:4:5:6', 'k=2001:db8:1:2::/64'],
      ['2001:db8:1:2:ffff::1', 'k=2001:db8:1:2::/64'],
      ['::ffff:203.0.113.7', 'k=203.0.113.7'],
      ['203.0.113.7', 'k=203.0.113.7'],
    ])(
      'a key function answering %p (its own marker: not the bucket of the client at that address)',
      (value, key) => {
        expect(compile(() => value)(context, undefined)).toBe(key);
      },
    );

    it('a header, with the configured subnet', () => {
      const realIp = compile('header:x-real-ip', { ipv6Subnet: 48 });
      expect(
        realIp(context, from('10.0.0.2', { headers: { 'x-real-ip': '2001:db8:1:2::9' } })),
      ).toBe('h=2001:db8:1::/48');
    });

    it('not a key that only contains dots or colons', () => {
      expect(compile(() => 'tenant:7')(context, undefined)).toBe('k=tenant:7');
      expect(compile(() => 'v1.2')(context, undefined)).toBe('k=v1.2');
    });
  });

  describe('an asynchronous key function', () => {
    it('answers with a promise of the same identity', async () => {
      const identify = compile(async () => 'tenant-7');
      const answer = identify(context, from('203.0.113.7'));
      expect(answer).toBeInstanceOf(Promise);
      await expect(answer).resolves.toBe('k=tenant-7');
      await expect(compile(async () => undefined)(context, from('203.0.113.7'))).resolves.toBe(
        '203.0.113.7',
      );
    });

    it('a synchronous one answers a string, no promise', () => {
      expect(typeof compile(() => 'tenant-7')(context, undefined)).toBe('string');
    });

    it("its rejection is the identity's rejection", async () => {
      await expect(
        compile(() => Promise.reject(new Error('session store down')))(context, undefined),
      ).rejects.toThrow('session store down');
    });
  });

  describe('an answer that would put every caller into one bucket is an error naming the route and limit', () => {
    it.each([
      [{ id: 1 }, 'an object'],
      [['a'], 'an array'],
      [true, 'a boolean'],
      [Number.NaN, 'NaN'],
    ])('%p', (value, described) => {
      const identify = compile(() => value as never);
      expect(() => identify(context, undefined)).toThrow(
        `RateLimit: OrdersController.search, limit "default": the key function returned ${described}; it must return a string or a number`,
      );
    });

    it('also when awaited', async () => {
      await expect(compile(async () => ({ id: 1 }) as never)(context, undefined)).rejects.toThrow(
        /returned an object/,
      );
    });
  });

  it('clientAddress(context), inside a key function, is the address the module sees', () => {
    const behindOneProxy = compileRequestAddress({
      trustProxy: 1,
      ipv6Subnet: 56,
      onUntrustedForward: () => undefined,
    });
    const identify = compile((ctx) => `acme:${clientAddress(ctx)}`, { address: behindOneProxy });
    const request = from('10.0.0.2', { headers: { 'x-forwarded-for': '2001:db8:1:2ff::1' } });
    expect(identify({ ...context } as ExecutionContext, request)).toBe(
      'k=acme:2001:db8:1:200::/56',
    );
  });

  it('one identity under different strategies gives different keys', () => {
    const request = from('203.0.113.7', { user: { id: 'alice' }, headers: { 'x-user': 'alice' } });
    const keys = [compile('user'), compile('header:x-user'), compile(() => 'alice')].map(
      (identify) => identify(context, request),
    );
    expect(keys).toEqual(['u=alice', 'h=alice', 'k=alice']);
  });
});
