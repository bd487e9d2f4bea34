import type { ExecutionContext } from '@nestjs/common';
import { DEFAULT_IPV6_SUBNET } from './ip-address.js';
import { compileRequestAddress } from './request-address.js';
import type { AddressedRequest, RequestAddress } from '../interfaces/request-address.interface.js';

/**
 * Where the guard leaves, on the context a key function receives, how the
 * module finds the client address and the request to find it in. Symbols, so
 * that nothing else sees them; two property writes, no allocation.
 */
const ADDRESS: unique symbol = Symbol('RATE_LIMIT:ADDRESS');
const REQUEST: unique symbol = Symbol('RATE_LIMIT:REQUEST');

interface StashedContext {
  [ADDRESS]?: RequestAddress;
  [REQUEST]?: AddressedRequest;
}

/** Outside the guard: what the platform resolved (`req.ip`), IPv6 by /64. */
const platformAddress = compileRequestAddress({
  trustProxy: undefined,
  ipv6Subnet: DEFAULT_IPV6_SUBNET,
  onUntrustedForward: () => undefined,
});

/** @internal called by the guard before a key function runs */
export function stashClientAddress(
  context: ExecutionContext,
  address: RequestAddress,
  request: AddressedRequest | undefined,
): void {
  const stash = context as unknown as StashedContext;
  stash[ADDRESS] = address;
  stash[REQUEST] = request;
}

/**
 * The client address of the request being limited, exactly as the `'ip'` key
 * sees it: `trustProxy` (or the platform's own trust-proxy setting) applied,
 * IPv6 grouped by `ipv6Subnet`. For key functions that combine the address
 * with something else, so that they keep the module's proxy handling and
 * IPv6 grouping:
 *
 * ```ts
 * @RateLimit({ rate: '10/s', key: (ctx) => `${tenantOf(ctx)}:${clientAddress(ctx)}` })
 * ```
 *
 * Called outside a key function (an interceptor, a controller), it answers
 * what the HTTP platform resolved (`req.ip`), IPv6 by /64. `undefined` when
 * the context has no address (a WebSocket or RPC context without one).
 *
 * @publicApi
 */
export function clientAddress(context: ExecutionContext): string | undefined {
  const stash = context as unknown as StashedContext;
  const address = stash[ADDRESS];
  if (address !== undefined) return address(stash[REQUEST]);
  if (context.getType() !== 'http') return undefined;
  return platformAddress(context.switchToHttp().getRequest<AddressedRequest | undefined>());
}
