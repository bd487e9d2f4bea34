import { BlockList } from 'node:net';
import type { TrustProxy } from '../interfaces/rate-limit-module-options.interface.js';
import { describeValue } from '../errors/option-error.js';
import { canonicalIp } from './ip-address.js';

/** Picks the client address from the socket address and the `X-Forwarded-For` chain. */
export type ClientAddressResolver = (socketAddress: string | undefined, forwardedFor: string | undefined) => string | undefined;

/**
 * Compile `trustProxy` once, at start-up, into the function the guard calls
 * per request. Throws a TypeError naming the option when it is malformed.
 */
export function compileTrustProxy(trustProxy: TrustProxy): ClientAddressResolver {
  if (trustProxy === false) return (socket) => socket;
  if (trustProxy === true) {
    return (socket, forwarded) => firstValid(forwardedChain(forwarded)) ?? socket;
  }
  if (typeof trustProxy === 'number') {
    if (!Number.isSafeInteger(trustProxy) || trustProxy < 0) {
      throw new TypeError(`RateLimitModule: trustProxy must be a boolean, a hop count (integer >= 0) or a list of addresses/CIDRs, got ${describeValue(trustProxy)}`);
    }
    const hops = trustProxy;
    return (socket, forwarded) => {
      if (hops === 0 || socket === undefined) return socket;
      const chain = [...forwardedChain(forwarded), socket];
      return chain[Math.max(0, chain.length - 1 - hops)];
    };
  }
  if (Array.isArray(trustProxy)) {
    const trusted = trustedList(trustProxy);
    return (socket, forwarded) => {
      if (socket === undefined) return undefined;
      const chain = [...forwardedChain(forwarded), socket];
      // Walk from the nearest hop outwards: the first address not a trusted
      // proxy is the client; anything further left was written by that client.
      for (let i = chain.length - 1; i >= 0; i--) {
        const ip = canonicalIp(chain[i]!);
        if (!ip) return chain[i + 1] ?? socket;
        if (!trusted.check(ip.address, ip.family === 4 ? 'ipv4' : 'ipv6')) return chain[i];
      }
      return chain[0];
    };
  }
  throw new TypeError(`RateLimitModule: trustProxy must be a boolean, a hop count or a list of addresses/CIDRs, got ${describeValue(trustProxy)}`);
}

function trustedList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix, ...rest] = String(entry).split('/');
    const ip = address === undefined ? undefined : canonicalIp(address);
    // Digits only: Number('') is 0, and '10.0.0.0/' must not trust every address.
    const bits = prefix === undefined ? undefined : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
    const maxBits = ip?.family === 4 ? 32 : 128;
    if (!ip || rest.length > 0 || (bits !== undefined && (!Number.isInteger(bits) || bits > maxBits))) {
      throw new TypeError(`RateLimitModule: trustProxy entry ${JSON.stringify(entry)} is not an IP address or CIDR`);
    }
    const type = ip.family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(ip.address, type);
    else list.addSubnet(ip.address, bits, type);
  }
  return list;
}

function forwardedChain(header: string | undefined): string[] {
  if (!header) return [];
  return header.split(',').map((part) => part.trim()).filter((part) => part !== '');
}

function firstValid(chain: readonly string[]): string | undefined {
  return chain.find((entry) => canonicalIp(entry) !== undefined);
}
