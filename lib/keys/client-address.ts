import { compileAddressList } from './address-list.js';
import type { TrustProxy } from '../interfaces/rate-limit-module-options.interface.js';
import { describeValue } from '../errors/option-error.js';
import { canonicalIp } from './ip-address.js';

/** Picks the client address from the socket address and the `X-Forwarded-For` chain. */
export type ClientAddressResolver = (
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
) => string | undefined;

/**
 * At most this many comma-separated `X-Forwarded-For` entries are read, from
 * the right (the nearest hop first), in every mode. A longer chain is read as
 * its right-most entries: with `true` the client is the left-most valid
 * address among them, a hop count above it stops there, and a list of trusted
 * proxies whose walk reaches it takes the left-most entry read. Real chains
 * are a few hops long; without the cap, a client sending a megabyte of
 * trusted-looking hops made every request walk all of them.
 */
export const MAX_FORWARDED_ENTRIES = 32;

/**
 * Longest entry read as an address, in characters (an IPv6 address with
 * brackets, zone and port is far shorter). A longer entry is not an address:
 * the scan stops there and the entry reads as {@link UNREADABLE_ENTRY}.
 */
export const MAX_FORWARDED_ENTRY_LENGTH = 128;

/** What an entry longer than {@link MAX_FORWARDED_ENTRY_LENGTH} reads as: not an address. */
export const UNREADABLE_ENTRY = 'unknown';

/**
 * Compile `trustProxy` once, at start-up, into the function the guard calls
 * per request. Throws a TypeError naming the option when it is malformed.
 * Work per request is bounded whatever the header's length: at most
 * {@link MAX_FORWARDED_ENTRIES} entries of at most
 * {@link MAX_FORWARDED_ENTRY_LENGTH} characters are read, from the right.
 */
export function compileTrustProxy(trustProxy: TrustProxy): ClientAddressResolver {
  if (trustProxy === false) return (socket) => socket;
  if (trustProxy === true) {
    return (socket, forwarded) =>
      leftMostValid(forwardedFromRight(forwarded, MAX_FORWARDED_ENTRIES)) ?? socket;
  }
  if (typeof trustProxy === 'number') {
    if (!Number.isSafeInteger(trustProxy) || trustProxy < 0) {
      throw new TypeError(
        `RateLimitModule: trustProxy must be a boolean, a hop count (integer >= 0) or a list of addresses/CIDRs, got ${describeValue(trustProxy)}`,
      );
    }
    const hops = trustProxy;
    return (socket, forwarded) => {
      if (hops === 0 || socket === undefined) return socket;
      // Nearest hop first: the socket is hop 0, the right-most entry hop 1, ...
      const chain = forwardedFromRight(forwarded, Math.min(hops, MAX_FORWARDED_ENTRIES));
      return chain.length === 0 ? socket : chain[Math.min(hops, chain.length) - 1];
    };
  }
  if (Array.isArray(trustProxy)) {
    const isTrusted = compileAddressList(trustProxy, 'trustProxy');
    return (socket, forwarded) => {
      if (socket === undefined) return undefined;
      // Walk from the nearest hop outwards: the first address not a trusted
      // proxy is the client; anything further left was written by that client.
      if (!isTrusted(socket)) return socket;
      let previous = socket;
      for (const entry of forwardedFromRight(forwarded, MAX_FORWARDED_ENTRIES)) {
        if (!canonicalIp(entry)) return previous; // not an address: the hop to its right is the client
        if (!isTrusted(entry)) return entry;
        previous = entry;
      }
      return previous;
    };
  }
  throw new TypeError(
    `RateLimitModule: trustProxy must be a boolean, a hop count or a list of addresses/CIDRs, got ${describeValue(trustProxy)}`,
  );
}

const COMMA = 44;

/**
 * The right-most non-empty entries of `X-Forwarded-For`, trimmed, nearest hop
 * first: at most `max` of them, out of at most {@link MAX_FORWARDED_ENTRIES}
 * comma-separated segments (empty ones count), scanning from the end of the
 * header without splitting it. An entry longer than
 * {@link MAX_FORWARDED_ENTRY_LENGTH} ends the scan as {@link UNREADABLE_ENTRY}.
 * Reads at most about `MAX_FORWARDED_ENTRIES × (MAX_FORWARDED_ENTRY_LENGTH + 1)`
 * characters.
 */
function forwardedFromRight(header: string | undefined, max: number): string[] {
  const entries: string[] = [];
  if (!header) return entries;
  let end = header.length; // exclusive end of the segment being read
  for (
    let segments = 0;
    end >= 0 && segments < MAX_FORWARDED_ENTRIES && entries.length < max;
    segments++
  ) {
    const lowest = Math.max(0, end - MAX_FORWARDED_ENTRY_LENGTH - 1);
    let comma = end - 1;
    while (comma >= lowest && header.charCodeAt(comma) !== COMMA) comma--;
    if (comma < lowest && lowest > 0) {
      // No comma within an address's length: not an address, and nothing
      // to its left is read (it was written by whoever wrote this).
      entries.push(UNREADABLE_ENTRY);
      break;
    }
    const entry = header.slice(comma + 1, end).trim();
    if (entry !== '') entries.push(entry);
    end = comma; // -1 once the first segment is read
  }
  return entries;
}

/** The left-most valid address of entries listed nearest hop first. */
function leftMostValid(entries: readonly string[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--)
    if (canonicalIp(entries[i]!) !== undefined) return entries[i];
  return undefined;
}
