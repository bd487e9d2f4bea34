import { compileRequestAddress } from '../../lib/keys/request-address.js';
import type { LimitContext } from '../../lib/limits/limit-context.js';

/**
 * The surroundings a limit is resolved in, for specs of limit resolution:
 * a route `OrdersController.search` (id `r1`), keyed by IP, no proxy, a
 * store without a local tier. Override what a spec is about.
 */
export function limitContext(overrides: Partial<LimitContext> = {}): LimitContext {
  return {
    where: 'OrdersController.search',
    routeId: 'r1',
    defaultKey: 'ip',
    address: compileRequestAddress({
      trustProxy: false,
      ipv6Subnet: 64,
      onUntrustedForward: () => undefined,
    }),
    ipv6Subnet: 64,
    warn: () => undefined,
    localFallback: false,
    ...overrides,
  };
}
