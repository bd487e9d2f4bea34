import {
  compileTrustProxy,
  MAX_FORWARDED_ENTRIES,
  MAX_FORWARDED_ENTRY_LENGTH,
} from './client-address.js';

const SOCKET = '10.0.0.2'; // the proxy (or the client, without one) at the other end of the TCP connection

describe('compileTrustProxy', () => {
  describe('false: the socket address, X-Forwarded-For ignored', () => {
    const resolve = compileTrustProxy(false);

    it.each([undefined, '', '203.0.113.9', '203.0.113.9, 198.51.100.1'])(
      'X-Forwarded-For %p',
      (forwarded) => {
        expect(resolve(SOCKET, forwarded)).toBe(SOCKET);
      },
    );

    it('no socket address: none', () => {
      expect(resolve(undefined, '203.0.113.9')).toBeUndefined();
    });
  });

  describe('true: the left-most valid X-Forwarded-For entry, else the socket', () => {
    const resolve = compileTrustProxy(true);

    it.each([
      ['203.0.113.9', '203.0.113.9'],
      ['203.0.113.9, 198.51.100.1, 10.0.0.1', '203.0.113.9'],
      ['  203.0.113.9  ,10.0.0.1', '203.0.113.9'],
      ['unknown, 203.0.113.9', '203.0.113.9'],
      [',, ,203.0.113.9', '203.0.113.9'],
      ['[2001:db8::1]:443, 10.0.0.1', '[2001:db8::1]:443'], // as written: canonicalised later, by the key
    ])('%p: %p', (forwarded, client) => {
      expect(resolve(SOCKET, forwarded)).toBe(client);
    });

    it.each([undefined, '', ' , ', 'unknown', 'garbage, also-garbage'])(
      '%p: the socket',
      (forwarded) => {
        expect(resolve(SOCKET, forwarded)).toBe(SOCKET);
      },
    );

    it('no socket and nothing usable forwarded: none', () => {
      expect(resolve(undefined, undefined)).toBeUndefined();
      expect(resolve(undefined, '203.0.113.9')).toBe('203.0.113.9');
    });
  });

  describe('a hop count: that many proxies in front, counted from the socket', () => {
    const chain = '203.0.113.9, 198.51.100.1, 10.0.0.1'; // client, proxy 1, proxy 2; the socket is proxy 3

    it.each([
      [0, SOCKET],
      [1, '10.0.0.1'],
      [2, '198.51.100.1'],
      [3, '203.0.113.9'],
      [4, '203.0.113.9'], // more hops than entries: the left-most
      [100, '203.0.113.9'],
    ])('%p hop(s): %p', (hops, client) => {
      expect(compileTrustProxy(hops)(SOCKET, chain)).toBe(client);
    });

    it('without X-Forwarded-For: the socket, whatever the count', () => {
      expect(compileTrustProxy(1)(SOCKET, undefined)).toBe(SOCKET);
      expect(compileTrustProxy(3)(SOCKET, '')).toBe(SOCKET);
    });

    it('takes the entry at that position as it is, valid or not', () => {
      expect(compileTrustProxy(1)(SOCKET, '203.0.113.9, unknown')).toBe('unknown');
    });

    it('no socket address: none', () => {
      expect(compileTrustProxy(1)(undefined, chain)).toBeUndefined();
    });

    it.each([-1, 1.5, NaN, Infinity, Number.MAX_SAFE_INTEGER + 1])('refuses %p', (hops) => {
      expect(() => compileTrustProxy(hops)).toThrow(TypeError);
      expect(() => compileTrustProxy(hops)).toThrow(
        `RateLimitModule: trustProxy must be a boolean, a hop count (integer >= 0) or a list of addresses/CIDRs, got ${hops}`,
      );
    });
  });

  describe('a list of trusted proxies (addresses and CIDRs)', () => {
    const resolve = compileTrustProxy(['10.0.0.0/8', '192.0.2.1', '2001:db8:ffff::/48']);

    it('walks from the socket outwards and takes the first address that is not a trusted proxy', () => {
      expect(resolve(SOCKET, '203.0.113.9, 10.0.0.1')).toBe('203.0.113.9');
      expect(resolve(SOCKET, '203.0.113.9, 192.0.2.1, 10.9.9.9')).toBe('203.0.113.9');
    });

    it('ignores what the client wrote to the left of itself', () => {
      expect(resolve(SOCKET, '1.1.1.1, 203.0.113.9, 10.0.0.1')).toBe('203.0.113.9');
    });

    it('a socket that is not a trusted proxy is the client: X-Forwarded-For ignored', () => {
      expect(resolve('198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
      expect(resolve('192.0.2.2', '203.0.113.9')).toBe('192.0.2.2'); // a single address trusts only itself
      expect(resolve('11.0.0.1', '203.0.113.9')).toBe('11.0.0.1'); // just outside 10.0.0.0/8
    });

    it('only trusted hops: the left-most one', () => {
      expect(resolve(SOCKET, '10.1.1.1, 192.0.2.1')).toBe('10.1.1.1');
      expect(resolve(SOCKET, undefined)).toBe(SOCKET);
    });

    it('an entry that is not an address stops the walk: the hop to its right is the client', () => {
      expect(resolve(SOCKET, '203.0.113.9, garbage, 10.0.0.1')).toBe('10.0.0.1');
      expect(resolve(SOCKET, 'garbage')).toBe(SOCKET);
    });

    it('matches IPv4-mapped sockets against IPv4 entries, and IPv6 sockets against IPv6 CIDRs', () => {
      expect(resolve('::ffff:10.0.0.2', '203.0.113.9')).toBe('203.0.113.9');
      expect(resolve('2001:db8:ffff:1::5', '203.0.113.9')).toBe('203.0.113.9');
      expect(resolve('2001:db8:fffe::5', '203.0.113.9')).toBe('2001:db8:fffe::5');
    });

    it('returns the entry as written (port, brackets), for the key to canonicalise', () => {
      expect(resolve(SOCKET, '[2001:db8::1]:443, 10.0.0.1')).toBe('[2001:db8::1]:443');
    });

    it('no socket address: none', () => {
      expect(resolve(undefined, '203.0.113.9')).toBeUndefined();
    });

    it('/0 trusts every address of its family', () => {
      expect(compileTrustProxy(['0.0.0.0/0'])('198.51.100.7', '203.0.113.9, 198.51.100.8')).toBe(
        '203.0.113.9',
      );
      expect(compileTrustProxy(['0.0.0.0/0'])('2001:db8::1', '203.0.113.9')).toBe('2001:db8::1');
    });

    it('an empty list trusts nobody', () => {
      expect(compileTrustProxy([])(SOCKET, '203.0.113.9')).toBe(SOCKET);
    });

    it.each([
      'not-an-ip',
      '10.0.0.0/33',
      '10.0.0.0/-1',
      '10.0.0.0/x',
      '10.0.0.0/1.5',
      '2001:db8::/129',
      '',
      '/8',
      '10.0.0.0/',
      '10.0.0.0/ 8',
      '10.0.0.0/0x8',
      '10.0.0.0/8/16',
    ])('refuses the entry %p, naming it', (entry) => {
      expect(() => compileTrustProxy(['127.0.0.1', entry])).toThrow(TypeError);
      expect(() => compileTrustProxy(['127.0.0.1', entry])).toThrow(
        `RateLimitModule: trustProxy entry ${JSON.stringify(entry)} is not an IP address or CIDR`,
      );
    });
  });

  it.each(['loopback', null, undefined, {}])('refuses %p', (trustProxy) => {
    expect(() => compileTrustProxy(trustProxy as never)).toThrow(TypeError);
    expect(() => compileTrustProxy(trustProxy as never)).toThrow(
      /trustProxy must be a boolean, a hop count or a list of addresses\/CIDRs, got /,
    );
  });

  describe(`a chain longer than ${MAX_FORWARDED_ENTRIES} entries: only the right-most ${MAX_FORWARDED_ENTRIES} are read`, () => {
    // A megabyte of hops, every one of them a trusted proxy, in front of the real client (left-most).
    const hop = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const hops = Array.from({ length: 80_000 }, (_, i) => hop(i + 1)); // 10.0.0.1 ... about 1 MB
    const megabyte = ['203.0.113.9', ...hops].join(', ');
    // The entry read last, nearest hop first: the 32nd from the right.
    const lastRead = hops[hops.length - MAX_FORWARDED_ENTRIES]!;

    it('the header is over 1 MB', () => {
      expect(megabyte.length).toBeGreaterThan(1_000_000);
    });

    it('a list of trusted proxies: all read hops trusted, the left-most one read is the client', () => {
      const resolve = compileTrustProxy(['10.0.0.0/8']);
      expect(resolve(SOCKET, megabyte)).toBe(lastRead);
      // Within the cap, the walk still finds the client.
      expect(
        resolve(SOCKET, ['203.0.113.9', ...hops.slice(-(MAX_FORWARDED_ENTRIES - 1))].join(', ')),
      ).toBe('203.0.113.9');
    });

    it('true: the left-most valid address among the right-most entries read', () => {
      expect(compileTrustProxy(true)(SOCKET, megabyte)).toBe(lastRead);
      expect(
        compileTrustProxy(true)(
          SOCKET,
          ['203.0.113.9', ...hops.slice(-(MAX_FORWARDED_ENTRIES - 1))].join(','),
        ),
      ).toBe('203.0.113.9');
    });

    it('a hop count: counted as before up to the cap, the left-most entry read beyond it', () => {
      expect(compileTrustProxy(1)(SOCKET, megabyte)).toBe(hops[hops.length - 1]);
      expect(compileTrustProxy(5)(SOCKET, megabyte)).toBe(hops[hops.length - 5]);
      expect(compileTrustProxy(MAX_FORWARDED_ENTRIES)(SOCKET, megabyte)).toBe(lastRead);
      expect(compileTrustProxy(1000)(SOCKET, megabyte)).toBe(lastRead);
    });

    it('empty segments count towards the cap', () => {
      const commas = ','.repeat(1_000_000);
      expect(compileTrustProxy(true)(SOCKET, `203.0.113.9${commas}`)).toBe(SOCKET);
      expect(
        compileTrustProxy(true)(SOCKET, `203.0.113.9${','.repeat(MAX_FORWARDED_ENTRIES - 1)}`),
      ).toBe('203.0.113.9');
      expect(compileTrustProxy(['10.0.0.0/8'])(SOCKET, `203.0.113.9${commas}`)).toBe(SOCKET);
    });

    it(`an entry longer than ${MAX_FORWARDED_ENTRY_LENGTH} characters is not an address, and ends the scan`, () => {
      const long = `203.0.113.9, ${'x'.repeat(1_000_000)}, 10.0.0.1`;
      expect(compileTrustProxy(['10.0.0.0/8'])(SOCKET, long)).toBe('10.0.0.1');
      expect(compileTrustProxy(true)(SOCKET, long)).toBe('10.0.0.1');
      expect(compileTrustProxy(2)(SOCKET, long)).toBe('unknown'); // not an address: the key falls back to the socket
      // Spaces around an address are fine up to the length limit.
      expect(
        compileTrustProxy(true)(
          SOCKET,
          `${' '.repeat(MAX_FORWARDED_ENTRY_LENGTH - 20)}203.0.113.9`,
        ),
      ).toBe('203.0.113.9');
      expect(compileTrustProxy(true)(SOCKET, `${' '.repeat(1_000_000)}203.0.113.9`)).toBe(SOCKET);
    });
  });
});
