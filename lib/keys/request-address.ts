import type { TrustProxy } from '../interfaces/rate-limit-module-options.interface.js';
import { compileTrustProxy } from './client-address.js';
import { ipIdentity } from './ip-address.js';
import type { AddressedRequest, RequestAddress } from '../interfaces/request-address.interface.js';

/** What {@link compileRequestAddress} needs besides the option. */
export interface RequestAddressOptions {
  /** The module's `trustProxy`; `undefined` (not set) means "what the platform resolved". */
  readonly trustProxy: TrustProxy | undefined;
  readonly ipv6Subnet: number;
  /**
   * Called (once, by the caller's choice) when a request carries
   * `X-Forwarded-For` that nobody trusted: with the socket address.
   */
  readonly onUntrustedForward: (socketAddress: string) => void;
}

/**
 * Compile, once at start-up, how a request's client address is found:
 *
 * - `trustProxy` not set: the address the HTTP platform resolved (`req.ip`),
 *   so Express's `app.set('trust proxy', …)` and Fastify's `trustProxy` apply
 *   as they do everywhere else in the application; the socket address when
 *   the platform gives none.
 * - `trustProxy` set: the module's own setting, over the socket address and
 *   `X-Forwarded-For`, whatever the platform says.
 *
 * An `X-Forwarded-For` that was not used (the address found is the socket's)
 * is reported through `onUntrustedForward`: behind a proxy that nobody
 * trusts, every client shares the proxy's bucket. Not reported when
 * `trustProxy` is explicitly `false` or `0` (the application said there is no proxy).
 */
export function compileRequestAddress(options: RequestAddressOptions): RequestAddress {
  const { trustProxy, ipv6Subnet, onUntrustedForward } = options;
  const fromChain = trustProxy === undefined ? undefined : compileTrustProxy(trustProxy);
  // `false` and `0` both say "no proxy": a forwarded header is then noise, not a misconfiguration.
  const reportUntrusted = trustProxy !== false && trustProxy !== 0;
  return (request) => {
    if (request === undefined) return undefined;
    const socket = request.socket?.remoteAddress ?? request.raw?.socket?.remoteAddress;
    const forwarded = forwardedFor(request);
    let address: string | undefined;
    if (fromChain) address = fromChain(socket, forwarded);
    else address = typeof request.ip === 'string' && request.ip !== '' ? request.ip : socket;
    if (reportUntrusted && forwarded && socket !== undefined && address === socket)
      onUntrustedForward(socket);
    const identity = address === undefined ? undefined : ipIdentity(address, ipv6Subnet);
    // A platform that trusts every hop hands over whatever the client wrote
    // (`X-Forwarded-For: junk`): the socket then, not one shared unknown bucket.
    return (
      identity ??
      (socket === undefined || address === socket ? undefined : ipIdentity(socket, ipv6Subnet))
    );
  };
}

function forwardedFor(request: AddressedRequest): string | undefined {
  const raw = request.headers?.['x-forwarded-for'];
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  return value === undefined || value.trim() === '' ? undefined : value;
}
