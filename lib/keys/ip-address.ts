import { isIPv4, isIPv6 } from 'node:net';

/**
 * Parse an address as it appears in a socket or an `X-Forwarded-For` entry
 * (`1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:80`, `fe80::1%eth0`) into a
 * canonical form; `undefined` when it is not an IP address. Only a port
 * (`:` and digits) may follow the address: `1.2.3.4:alice` or
 * `[2001:db8::1]:alice`, a key combining an address with more, is not an
 * address (it would otherwise collapse into the bare address's bucket).
 *
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes plain IPv4, so a dual-stack
 * server does not give one client two buckets.
 */
export function canonicalIp(
  raw: string,
): { readonly address: string; readonly family: 4 | 6 } | undefined {
  if (isPlainIpv4(raw)) return { address: raw, family: 4 };
  let value = raw.trim();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0 || !isPortSuffix(value.slice(end + 1))) return undefined;
    value = value.slice(1, end);
  } else if (value.indexOf(':') !== value.lastIndexOf(':') || !value.includes(':')) {
    // zero or several colons: no port to strip (IPv6 without brackets has no port)
  } else {
    // "1.2.3.4:5678". Only a port is dropped: "1.2.3.4:alice" (a key combining
    // an address with more) is not the address 1.2.3.4.
    const colon = value.indexOf(':');
    if (!isPortSuffix(value.slice(colon))) return undefined;
    value = value.slice(0, colon);
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

/** How many leading bits of an IPv6 address identify one client, unless configured (`ipv6Subnet`). */
export const DEFAULT_IPV6_SUBNET = 64;

/**
 * The identity of a client address: IPv4 as is, IPv6 by its prefix of
 * `ipv6Subnet` bits (/64 by default), since one subscriber usually holds a
 * whole /64 (or /56, /48) and could otherwise rotate through 2^64 buckets.
 *
 * A /64 reads `2001:db8:1:2::/64`; other prefixes keep the groups the prefix
 * touches, with the bits past it zeroed (`2001:db8:100::/56`).
 */
export function ipIdentity(
  raw: string,
  ipv6Subnet: number = DEFAULT_IPV6_SUBNET,
): string | undefined {
  // The common case, a socket's IPv4 address, is its own identity.
  if (isPlainIpv4(raw)) return raw;
  const ip = canonicalIp(raw);
  if (!ip) return undefined;
  if (ip.family === 4) return ip.address;
  if (ipv6Subnet >= 128) return ip.address;
  const groups = ip.address.split(':').map((group) => parseInt(group, 16));
  const kept = Math.ceil(ipv6Subnet / 16);
  const partial = ipv6Subnet % 16;
  if (partial !== 0) groups[kept - 1] = groups[kept - 1]! & ((0xffff << (16 - partial)) & 0xffff);
  return `${groups
    .slice(0, kept)
    .map((group) => group.toString(16))
    .join(':')}::/${ipv6Subnet}`;
}

/**
 * Whether a value chosen as a key (a key function's answer, a header) is an
 * IP address, and so must be grouped like the client address. Cheap first:
 * most keys (user ids, API keys) have neither a dot nor a colon.
 */
export function addressIdentity(value: string, ipv6Subnet: number): string | undefined {
  if (value.length > 64 || (!value.includes('.') && !value.includes(':'))) return undefined;
  return ipIdentity(value, ipv6Subnet);
}

/** Nothing, or `:<port>` (decimal digits): what may follow an address and be dropped. */
function isPortSuffix(rest: string): boolean {
  return rest === '' || /^:\d{1,5}$/.test(rest);
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

/**
 * True for a dotted-quad IPv4 address exactly as `net.isIPv4` accepts it
 * (four decimal parts 0–255, no leading zeros), and nothing around it. A
 * character scan: the address of every request goes through here, and the
 * regular expression behind `isIPv4` costs several times more.
 */
export function isPlainIpv4(value: string): boolean {
  const length = value.length;
  if (length < 7 || length > 15) return false;
  let parts = 0;
  let part = 0;
  let digits = 0;
  for (let i = 0; i <= length; i++) {
    const code = i < length ? value.charCodeAt(i) : 46; // a '.' after the end closes the last part
    if (code === 46) {
      if (digits === 0 || part > 255) return false;
      parts++;
      part = 0;
      digits = 0;
    } else {
      if (code < 48 || code > 57 || (digits === 1 && part === 0) || digits === 3) return false;
      part = part * 10 + (code - 48);
      digits++;
    }
  }
  return parts === 4;
}
