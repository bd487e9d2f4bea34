import type { RateLimitStore } from '../../store/rate-limit-store.interface.js';

/** The stores the library ships, by class name; anything else is `custom`. */
const KINDS: Readonly<Record<string, string>> = { MemoryStore: 'memory', RedisStore: 'redis', TwoTierStore: 'two-tier' };

/**
 * A store's kind as a metric attribute: bounded (four values), and no caller
 * data (never the store's connection string or key prefix). By class name, so
 * that the root entry point need not import the Redis adapters to tell them apart.
 */
export function storeKind(store: RateLimitStore): string {
  return KINDS[(store as object).constructor?.name ?? ''] ?? 'custom';
}
