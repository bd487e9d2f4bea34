import { MemoryStore, type RateLimitStore } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import type { Redis } from 'ioredis';
import { connectSharedClient } from './redis-client.js';
import { uniquePrefix } from './redis-harness.js';
import { ON_TEST_CLOCK } from './test-clock-store-options.js';

export { ON_TEST_CLOCK };

/** The stores every HTTP scenario that runs "on each store" is run against. */
export const STORES = ['memory', 'redis'] as const;
export type StoreKind = (typeof STORES)[number];

/** A store plus what must be released after the test. */
export interface StoreFixture {
  readonly store: RateLimitStore;
  release(): Promise<void>;
}

/**
 * A fresh store of the given kind. The Redis one uses the harness's server,
 * its own key prefix, and {@link ON_TEST_CLOCK}.
 */
export async function makeStore(kind: StoreKind, label: string): Promise<StoreFixture> {
  if (kind === 'memory') return { store: new MemoryStore(), release: async () => undefined };
  const client = await connectSharedClient();
  const store = new RedisStore({ client, keyPrefix: uniquePrefix(label), ...ON_TEST_CLOCK });
  return {
    store,
    release: async () => {
      await store.close();
      await client.quit();
    },
  };
}

/** The three built-in stores, for scenarios that must hold on the two-tier store too. */
export const ALL_STORES = ['memory', 'redis', 'two-tier'] as const;
export type AnyStoreKind = (typeof ALL_STORES)[number];

/**
 * A fresh store of `kind` on a shared `client` (unused for memory), its own
 * key prefix, {@link ON_TEST_CLOCK}. Closing the application closes the
 * store, never the client.
 */
export function storeOnClient(
  kind: AnyStoreKind,
  client: Redis | undefined,
  label: string,
): RateLimitStore {
  if (kind === 'memory') return new MemoryStore();
  const options = { client: client!, keyPrefix: uniquePrefix(label), ...ON_TEST_CLOCK };
  return kind === 'redis' ? new RedisStore(options) : new TwoTierStore(options);
}

/**
 * In a `describe` block: one shared Redis client for the block (none for the
 * memory store), opened before its tests and quit after; returns the store
 * factory of {@link storeOnClient} for that kind.
 */
export function storesOfKind(kind: AnyStoreKind): (label: string) => RateLimitStore {
  let client: Redis | undefined;
  beforeAll(async () => {
    if (kind !== 'memory') client = await connectSharedClient();
  });
  afterAll(async () => {
    await client?.quit();
  });
  return (label) => storeOnClient(kind, client, label);
}
