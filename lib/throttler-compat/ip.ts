import { ipIdentity } from '../keys/ip-address.js';

/** `@nestjs/throttler`'s default IPv6 grouping. */
export const DEFAULT_IPV6_SUBNET_PREFIX = 64;

/**
 * The tracker of an address, grouped as this library groups client addresses
 * (`ipIdentity`: IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 by
 * `ipv6SubnetPrefix`, `'<prefix>::/<bits>'`); the IPv6 loopback stays `'::1'`,
 * as throttler answers it. Anything else is returned unchanged.
 */
export function normalizeIp(ip: string, ipv6SubnetPrefix = DEFAULT_IPV6_SUBNET_PREFIX): string {
  if (typeof ip !== 'string' || ip.length === 0) return ip;
  const bare = ip.includes('%') ? ip.slice(0, ip.indexOf('%')) : ip;
  if (bare === '::1' || bare === '0:0:0:0:0:0:0:1') return '::1';
  const bits = Number.isFinite(ipv6SubnetPrefix)
    ? Math.min(Math.max(Math.trunc(ipv6SubnetPrefix), 0), 128)
    : DEFAULT_IPV6_SUBNET_PREFIX;
  return ipIdentity(bare, bits) ?? ip;
}
