import { isIPv4, isIPv6 } from 'node:net';

/**
 * Parse an address as it appears in a socket or an `X-Forwarded-For` entry
 * (`1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:80`, `fe80::1%eth0`) into a
 * canonical form; `undefined` when it is not an IP address.
 *
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes plain IPv4, so a dual-stack
 * server does not give one client two buckets.
 */
export function canonicalIp(raw: string): { readonly address: string; readonly family: 4 | 6 } | undefined {
  let value = raw.trim();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    value = value.slice(1, end);
  } else if (value.indexOf(':') !== value.lastIndexOf(':') || !value.includes(':')) {
    // zero or several colons: no port to strip (IPv6 without brackets has no port)
  } else {
    value = value.slice(0, value.indexOf(':')); // "1.2.3.4:5678"
  }
  const zone = value.indexOf('%');
  if (zone >= 0) value = value.slice(0, zone);
  if (isIPv4(value)) return { address: value, family: 4 };
  if (!isIPv6(value)) return undefined;
  const groups = expandIpv6(value);
  if (isIpv4Mapped(groups)) {
    const v4 = `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
    return { address: v4, family: 4 };
  }
  return { address: groups.map((g) => g.toString(16)).join(':'), family: 6 };
}

/**
 * The identity of a client address: IPv4 as is, IPv6 by its /64 prefix,
 * since one subscriber usually holds a whole /64 and could otherwise rotate
 * through 2^64 buckets.
 */
export function ipIdentity(raw: string): string | undefined {
  const ip = canonicalIp(raw);
  if (!ip) return undefined;
  if (ip.family === 4) return ip.address;
  return `${ip.address.split(':').slice(0, 4).join(':')}::/64`;
}

/** Eight 16-bit groups of a valid IPv6 address (which may end in dotted IPv4). */
function expandIpv6(address: string): number[] {
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string | undefined): number[] =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const gap = text.indexOf('::');
  if (gap < 0) return parse(text);
  const left = parse(text.slice(0, gap));
  const right = parse(text.slice(gap + 2));
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function isIpv4Mapped(groups: readonly number[]): boolean {
  return groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
}
