import { isIPv4 } from 'node:net';
import { addressIdentity, canonicalIp, ipIdentity, isPlainIpv4 } from './ip-address.js';

describe('canonicalIp', () => {
  describe('IPv4', () => {
    it.each([
      ['1.2.3.4', '1.2.3.4'],
      ['  1.2.3.4  ', '1.2.3.4'],
      ['1.2.3.4:5678', '1.2.3.4'],
      ['255.255.255.255', '255.255.255.255'],
      ['0.0.0.0', '0.0.0.0'],
    ])('%p is %p', (raw, address) => {
      expect(canonicalIp(raw)).toEqual({ address, family: 4 });
    });
  });

  describe('IPv6: eight lower-case hex groups, no leading zeros, no ::', () => {
    it.each([
      ['::1', '0:0:0:0:0:0:0:1'],
      ['::', '0:0:0:0:0:0:0:0'],
      ['1::', '1:0:0:0:0:0:0:0'],
      ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
      ['2001:db8::1', '2001:db8:0:0:0:0:0:1'],
      ['2001:DB8::1', '2001:db8:0:0:0:0:0:1'],
      ['2001:0db8:0000:0000::0001', '2001:db8:0:0:0:0:0:1'],
      ['2001:db8:0:0:1::1', '2001:db8:0:0:1:0:0:1'],
      ['[::1]', '0:0:0:0:0:0:0:1'],
      ['[2001:db8::1]:443', '2001:db8:0:0:0:0:0:1'],
      ['fe80::1%eth0', 'fe80:0:0:0:0:0:0:1'],
      ['[fe80::1%25eth0]:80', 'fe80:0:0:0:0:0:0:1'],
      // Without brackets an IPv6 address has no port: the last group stays.
      ['2001:db8::1:80', '2001:db8:0:0:0:0:1:80'],
      // Dotted tails that are not IPv4-mapped stay IPv6.
      ['::1.2.3.4', '0:0:0:0:0:0:102:304'],
      ['64:ff9b::1.2.3.4', '64:ff9b:0:0:0:0:102:304'],
    ])('%p is %p', (raw, address) => {
      expect(canonicalIp(raw)).toEqual({ address, family: 6 });
    });

    it('gives every spelling of one address the same form', () => {
      const spellings = [
        '2001:db8::ff00:42:8329',
        '2001:0DB8:0000:0000:0000:FF00:0042:8329',
        '[2001:db8:0:0:0:ff00:42:8329]:8080',
      ];
      expect(new Set(spellings.map((s) => canonicalIp(s)?.address)).size).toBe(1);
    });
  });

  describe('IPv4-mapped IPv6 is plain IPv4 (a dual-stack server sees one client once)', () => {
    it.each([
      '::ffff:1.2.3.4',
      '::FFFF:1.2.3.4',
      '::ffff:0102:0304',
      '0:0:0:0:0:ffff:1.2.3.4',
      '[::ffff:1.2.3.4]:80',
      '::ffff:1.2.3.4%eth0',
    ])('%p', (raw) => {
      expect(canonicalIp(raw)).toEqual({ address: '1.2.3.4', family: 4 });
    });

    it('not with another prefix than ::ffff:0:0/96', () => {
      expect(canonicalIp('::fffe:1.2.3.4')?.family).toBe(6);
      expect(canonicalIp('1::ffff:1.2.3.4')?.family).toBe(6);
    });
  });

  describe('anything else is not an address', () => {
    it.each([
      '',
      '   ',
      'unknown',
      'localhost',
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '01.2.3.4',
      '1:2:3:4:5:6:7:8:9',
      ':::1',
      'g::1',
      '[::1',
      '_hidden',
    ])('%p', (raw) => {
      expect(canonicalIp(raw)).toBeUndefined();
    });

    it.each([
      '1.2.3.4:alice',
      '1.2.3.4:80x',
      '1.2.3.4:',
      '1.2.3.4:123456',
      '[::1]:alice',
      '[::1]x',
      '[2001:db8::1]:443:1',
      '[::1]:',
    ])('%p: an address followed by more than a port', (raw) => {
      expect(canonicalIp(raw)).toBeUndefined();
    });
  });
});

describe('addressIdentity (a chosen key that may be an address)', () => {
  it('groups an address, with or without a port', () => {
    expect(addressIdentity('203.0.113.7', 64)).toBe('203.0.113.7');
    expect(addressIdentity('203.0.113.7:8080', 64)).toBe('203.0.113.7');
    expect(addressIdentity('[2001:db8:1:2::1]:443', 56)).toBe('2001:db8:1:0::/56');
  });

  it('leaves a key that only starts with an address alone (one bucket per tenant, not per address)', () => {
    expect(addressIdentity('203.0.113.7:tenant-a', 64)).toBeUndefined();
    expect(addressIdentity('[2001:db8:1:2::1]:tenant-a', 64)).toBeUndefined();
    expect(addressIdentity('tenant-a:203.0.113.7', 64)).toBeUndefined();
  });
});

describe('ipIdentity', () => {
  it('IPv4: the address itself, port and mapping removed', () => {
    expect(ipIdentity('203.0.113.7')).toBe('203.0.113.7');
    expect(ipIdentity('203.0.113.7:51234')).toBe('203.0.113.7');
    expect(ipIdentity('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('IPv6: the /64 the address belongs to', () => {
    expect(ipIdentity('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(ipIdentity('[2001:DB8:1:2::]:443')).toBe('2001:db8:1:2::/64');
    expect(ipIdentity('::1')).toBe('0:0:0:0::/64');
  });

  it('one /64 is one identity, whatever the interface id; the next /64 is another', () => {
    const identities = [
      '2001:db8:a:b::1',
      '2001:db8:a:b:ffff:ffff:ffff:ffff',
      '2001:db8:a:b:1234::',
    ].map((raw) => ipIdentity(raw));
    expect(new Set(identities)).toEqual(new Set(['2001:db8:a:b::/64']));
    expect(ipIdentity('2001:db8:a:c::1')).toBe('2001:db8:a:c::/64');
  });

  it.each([
    [48, '2001:db8:a::/48'],
    [56, '2001:db8:a:b00::/56'],
    [60, '2001:db8:a:bc0::/60'],
    [1, '0::/1'],
    [127, '2001:db8:a:bcd:1:2:3:4::/127'],
    [128, '2001:db8:a:bcd:1:2:3:5'],
  ])('another subnet: /%p, the bits past the prefix zeroed', (subnet, identity) => {
    expect(ipIdentity('2001:db8:a:bcd:1:2:3:5', subnet)).toBe(identity);
  });

  it('IPv4 is not grouped, whatever the IPv6 subnet', () => {
    expect(ipIdentity('203.0.113.7', 48)).toBe('203.0.113.7');
  });

  it('undefined for what is not an address', () => {
    expect(ipIdentity('unknown')).toBeUndefined();
    expect(ipIdentity('')).toBeUndefined();
  });
});

describe('isPlainIpv4 (the fast path) agrees with net.isIPv4', () => {
  it.each(['1.2.3.4', '0.0.0.0', '255.255.255.255', '10.0.0.1', '192.168.100.200'])(
    '%s is one',
    (value) => {
      expect(isPlainIpv4(value)).toBe(true);
    },
  );

  it.each([
    '01.2.3.4',
    '1.2.3.04',
    '256.1.1.1',
    '1.2.3',
    '1.2.3.4.5',
    '1..2.3',
    '.1.2.3',
    '1.2.3.',
    ' 1.2.3.4',
    '1.2.3.4:80',
    '1.2.3.4 ',
    '::1',
    '1000.1.1.1',
    '1.2.3.a',
    '',
  ])('%j is not', (value) => {
    expect(isPlainIpv4(value)).toBe(false);
  });

  it('on 20,000 random strings over digits and dots', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = '0123456789....25';
    for (let n = 0; n < 20_000; n++) {
      let value = '';
      const length = 5 + Math.floor(random() * 12);
      for (let i = 0; i < length; i++) value += alphabet[Math.floor(random() * alphabet.length)];
      expect([value, isPlainIpv4(value)]).toEqual([value, isIPv4(value)]);
    }
  });
});
