import { BlockList } from 'node:net';
import { canonicalIp } from './ip-address.js';

/** Membership in a list of addresses and CIDRs, compiled once. */
export type AddressList = (address: string) => boolean;

/**
 * Compile a list of addresses and CIDRs (`'10.0.0.0/8'`, `'::1'`,
 * `'2001:db8::/32'`) into a membership test. An IPv4-mapped IPv6 address
 * matches its IPv4 entry. A value that is not an address is in no list.
 * Throws a TypeError naming `option` for an entry that is neither.
 */
export function compileAddressList(entries: readonly string[], option: string): AddressList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix, ...rest] = String(entry).split('/');
    const ip = address === undefined ? undefined : canonicalIp(address);
    // Digits only: Number('') is 0, and '10.0.0.0/' must not match every address.
    const bits = prefix === undefined ? undefined : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
    const maxBits = ip?.family === 4 ? 32 : 128;
    if (
      !ip ||
      rest.length > 0 ||
      (bits !== undefined && (!Number.isInteger(bits) || bits > maxBits))
    ) {
      throw new TypeError(
        `RateLimitModule: ${option} entry ${JSON.stringify(entry)} is not an IP address or CIDR`,
      );
    }
    const type = ip.family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(ip.address, type);
    else list.addSubnet(ip.address, bits, type);
  }
  return (value) => {
    const ip = canonicalIp(value);
    return ip !== undefined && list.check(ip.address, ip.family === 4 ? 'ipv4' : 'ipv6');
  };
}
