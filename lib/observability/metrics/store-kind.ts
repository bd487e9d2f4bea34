import type { RateLimitStore } from '../../store/rate-limit-store.interface.js';

/**
 * A store's kind as a metric attribute: what the store declares
 * ({@link RateLimitStore.kind}: `memory`, `redis`, `two-tier` for the stores
 * the library ships), `custom` for a store that declares none. Read from the
 * store contract, so that the root entry point need not import the Redis
 * adapters to tell them apart.
 */
export function storeKind(store: RateLimitStore): string {
  const kind = store.kind;
  return typeof kind === 'string' && kind !== '' ? kind : 'custom';
}
