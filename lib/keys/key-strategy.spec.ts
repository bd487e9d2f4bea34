import type { ExecutionContext } from '@nestjs/common';
import type { KeyStrategy } from '../interfaces/rate-limit-options.interface.js';
import { boundedIdentity } from './bounded-key.js';
import { compileTrustProxy, type ClientAddressResolver } from './client-address.js';
import { compileKeyStrategy, type Identify, type RequestLike } from './key-strategy.js';

/** The guard passes Nest's context through; the built-in strategies only read the request. */
const context = { kind: 'test context' } as unknown as ExecutionContext;
const socketOnly = compileTrustProxy(false);

const from = (address: string | undefined, extra: Partial<RequestLike> = {}): RequestLike => ({ socket: { remoteAddress: address }, ...extra });

function compile(strategy: KeyStrategy, clientAddress: ClientAddressResolver = socketOnly): Identify {
  const identify = compileKeyStrategy(strategy, clientAddress);
  if (!identify) throw new Error(`not compiled: ${String(strategy)}`);
  return identify;
}

describe('compileKeyStrategy', () => {
  it.each(['cookie', 'header:', 'HEADER:x-api-key', 'ip ', '', 42, null, undefined, {}])('does not recognise %p', (strategy) => {
    expect(compileKeyStrategy(strategy as never, socketOnly)).toBeUndefined();
  });

  describe("'ip'", () => {
    const ip = compile('ip');

    it('the socket address, canonical, marked ip=', () => {
      expect(ip(context, from('203.0.113.7'))).toBe('ip=203.0.113.7');
      expect(ip(context, from('::ffff:203.0.113.7'))).toBe('ip=203.0.113.7');
    });

    it('IPv6 by its /64', () => {
      expect(ip(context, from('2001:db8:1:2:3:4:5:6'))).toBe('ip=2001:db8:1:2::/64');
      expect(ip(context, from('2001:db8:1:2:ffff::1'))).toBe('ip=2001:db8:1:2::/64');
    });

    it("Fastify's raw socket when there is no socket on the request", () => {
      expect(ip(context, { raw: { socket: { remoteAddress: '198.51.100.4' } } })).toBe('ip=198.51.100.4');
      expect(ip(context, { socket: { remoteAddress: '203.0.113.7' }, raw: { socket: { remoteAddress: '198.51.100.4' } } })).toBe(
        'ip=203.0.113.7',
      );
    });

    it('passes the socket address and X-Forwarded-For (repeated headers joined) to the trust-proxy resolver', () => {
      const calls: [string | undefined, string | undefined][] = [];
      const recording: ClientAddressResolver = (socket, forwarded) => {
        calls.push([socket, forwarded]);
        return '192.0.2.8';
      };
      const identify = compile('ip', recording);
      expect(identify(context, from('10.0.0.2', { headers: { 'x-forwarded-for': '203.0.113.9' } }))).toBe('ip=192.0.2.8');
      identify(context, from('10.0.0.2', { headers: { 'x-forwarded-for': ['203.0.113.9', '198.51.100.1'] } }));
      identify(context, from('10.0.0.2'));
      expect(calls).toEqual([
        ['10.0.0.2', '203.0.113.9'],
        ['10.0.0.2', '203.0.113.9,198.51.100.1'],
        ['10.0.0.2', undefined],
      ]);
    });

    it('with trust proxy, the client the resolver picks', () => {
      const behindOneProxy = compile('ip', compileTrustProxy(1));
      expect(behindOneProxy(context, from('10.0.0.2', { headers: { 'x-forwarded-for': '1.1.1.1, 203.0.113.9' } }))).toBe('ip=203.0.113.9');
    });

    it('ip=unknown, one shared bucket, when there is no usable address', () => {
      expect(ip(context, undefined)).toBe('ip=unknown');
      expect(ip(context, {})).toBe('ip=unknown');
      expect(ip(context, from(undefined))).toBe('ip=unknown');
      expect(ip(context, from('not an address'))).toBe('ip=unknown');
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
      expect(user(context, from('203.0.113.7', { user: { id: 'alice', sub: 'bob' } }))).toBe('u=alice');
      expect(user(context, from('203.0.113.7', { user: { id: 42 } }))).toBe('u=42');
      expect(user(context, from('203.0.113.7', { user: { id: 0 } }))).toBe('u=0');
      expect(user(context, from('203.0.113.7', { user: { id: 'x'.repeat(300) } }))).toBe(`u${boundedIdentity('x'.repeat(300))}`);
    });

    it('falls back to the address without a user or an id', () => {
      for (const user of [undefined, null, {}, { id: null }, { id: '' }, { sub: '' }]) {
        expect(compile('user')(context, from('203.0.113.7', { user: user as RequestLike['user'] }))).toBe('ip=203.0.113.7');
      }
      expect(compile('user')(context, undefined)).toBe('ip=unknown');
    });
  });

  describe("'header:<name>'", () => {
    it('the first value of that header (name case-insensitive), bounded, marked h', () => {
      const apiKey = compile('header:X-Api-Key');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': 'k-123' } }))).toBe('h=k-123');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': ['k-1', 'k-2'] } }))).toBe('h=k-1');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': 'a key with spaces' } }))).toBe(`h${boundedIdentity('a key with spaces')}`);
    });

    it('falls back to the address when the header is absent or empty', () => {
      const apiKey = compile('header:x-api-key');
      expect(apiKey(context, from('203.0.113.7'))).toBe('ip=203.0.113.7');
      expect(apiKey(context, from('203.0.113.7', { headers: {} }))).toBe('ip=203.0.113.7');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': '' } }))).toBe('ip=203.0.113.7');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-api-key': [] } }))).toBe('ip=203.0.113.7');
      expect(apiKey(context, from('203.0.113.7', { headers: { 'x-other': 'k-123' } }))).toBe('ip=203.0.113.7');
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
      expect(compile(() => value)(context, from('203.0.113.7'))).toBe('ip=203.0.113.7');
    });
  });

  it('one identity under different strategies gives different keys', () => {
    const request = from('203.0.113.7', { user: { id: 'alice' }, headers: { 'x-user': 'alice' } });
    const keys = [compile('user'), compile('header:x-user'), compile(() => 'alice')].map((identify) => identify(context, request));
    expect(keys).toEqual(['u=alice', 'h=alice', 'k=alice']);
  });
});
