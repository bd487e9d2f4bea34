import type { Redis } from 'ioredis';
import { RedisStore } from '../../adapters/redis/index.js';
import { TwoTierStore, type TwoTierStoreOptions } from '../../adapters/two-tier/index.js';
import { connectSharedClient } from './redis-client.js';
import { uniquePrefix } from './redis-harness.js';
import { ON_TEST_CLOCK } from './test-clock-store-options.js';

/** What {@link twoTierFixture} gives a describe block. */
export interface TwoTierFixture {
  /** The describe block's client on the shared redis-server (set from `beforeAll` on). */
  readonly client: Redis;
  /** This test's key prefix (a fresh one per test). */
  readonly prefix: string;
  /** A store on `client` and `prefix`, closed after the test. */
  store(options?: Partial<TwoTierStoreOptions>): TwoTierStore;
  /** A plain `RedisStore` on the same buckets (test clock): another instance, or Redis' view. */
  redisStore(): RedisStore;
}

/**
 * The setup TwoTierStore specs share: one client on the harness' shared
 * redis-server for the describe block, a fresh key prefix per test (from
 * `label`), and stores on them closed after each test. Their options:
 * {@link ON_TEST_CLOCK}, then `defaults`, then a store's own. Call it inside
 * a `describe`: it adds that block's hooks.
 */
export function twoTierFixture(
  label: string,
  defaults: Partial<TwoTierStoreOptions> = {},
): TwoTierFixture {
  let client: Redis | undefined;
  let prefix: string | undefined;
  const stores: TwoTierStore[] = [];

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  afterAll(() => client?.quit());
  beforeEach(() => {
    prefix = uniquePrefix(label);
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  return {
    get client() {
      if (client === undefined) throw new Error('twoTierFixture: no client before beforeAll');
      return client;
    },
    get prefix() {
      if (prefix === undefined) throw new Error('twoTierFixture: no prefix before beforeEach');
      return prefix;
    },
    store(options = {}) {
      const store = new TwoTierStore({
        client: this.client,
        keyPrefix: this.prefix,
        ...ON_TEST_CLOCK,
        ...defaults,
        ...options,
      });
      stores.push(store);
      return store;
    },
    redisStore() {
      return new RedisStore({ client: this.client, keyPrefix: this.prefix, ...ON_TEST_CLOCK });
    },
  };
}
