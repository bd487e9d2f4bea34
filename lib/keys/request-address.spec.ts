import type { TrustProxy } from '../interfaces/rate-limit-module-options.interface.js';
import { compileRequestAddress } from './request-address.js';
import type { AddressedRequest } from '../interfaces/request-address.interface.js';

const PROXY = '10.0.0.2';

function compile(trustProxy: TrustProxy | undefined, ipv6Subnet = 64) {
  const untrusted: string[] = [];
  const address = compileRequestAddress({
    trustProxy,
    ipv6Subnet,
    onUntrustedForward: (socket) => untrusted.push(socket),
  });
  return { address, untrusted };
}
const request = (
  ip: unknown,
  forwarded?: string,
  socket: string | undefined = PROXY,
): AddressedRequest => ({
  ip,
  socket: { remoteAddress: socket },
  headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
});

describe('compileRequestAddress', () => {
  describe('trustProxy not set: what the platform resolved', () => {
    const { address, untrusted } = compile(undefined);

    it("req.ip, grouped, whatever X-Forwarded-For says (the platform's trust applies)", () => {
      expect(address(request('203.0.113.9', '203.0.113.9'))).toBe('203.0.113.9');
      expect(address(request('2001:db8:1:2::7'))).toBe('2001:db8:1:2::/64');
      expect(untrusted).toEqual([]);
    });

    it("the socket (Fastify's raw one too) when the platform gives no req.ip", () => {
      expect(address(request(undefined))).toBe(PROXY);
      expect(address(request(''))).toBe(PROXY);
      expect(address({ raw: { socket: { remoteAddress: '198.51.100.4' } } })).toBe('198.51.100.4');
      expect(address(undefined)).toBeUndefined();
      expect(address({})).toBeUndefined();
    });

    it('the socket when req.ip is not an address (a platform trusting every hop hands over what the client wrote)', () => {
      expect(address(request('junk', 'junk'))).toBe(PROXY);
    });
  });

  it("the module's trustProxy, when set, over req.ip", () => {
    const { address } = compile(1);
    expect(address(request(PROXY, '198.51.100.1, 203.0.113.9'))).toBe('203.0.113.9');
    expect(compile(false).address(request('203.0.113.9', '203.0.113.9'))).toBe(PROXY);
  });

  describe('an X-Forwarded-For nobody trusted is reported, with the socket address', () => {
    it.each([undefined, true, ['192.0.2.1']] as const)('trustProxy %p', (trustProxy) => {
      const { address, untrusted } = compile(trustProxy as TrustProxy | undefined);
      // The platform trusted nothing (req.ip is the socket); the module's setting, if any, does not trust this socket.
      const forwarded = trustProxy === true ? 'junk' : '203.0.113.9';
      address(request(PROXY, forwarded));
      expect(untrusted).toEqual([PROXY]);
    });

    it.each([false, 0] as const)(
      'but not with trustProxy %p: the application said there is no proxy',
      (trustProxy) => {
        const { address, untrusted } = compile(trustProxy);
        address(request(PROXY, '203.0.113.9'));
        expect(untrusted).toEqual([]);
      },
    );

    it('not without the header, nor with an empty one, nor when it was used', () => {
      const { address, untrusted } = compile(undefined);
      address(request(PROXY));
      address(request(PROXY, '  '));
      address(request('203.0.113.9', '203.0.113.9'));
      expect(untrusted).toEqual([]);
    });
  });
});
