/**
 * TwoTierStore with window limits: windows are never leased, so several
 * instances sharing one Redis never admit more than the quota together; on
 * the local fallback each enforces its share of the quota.
 */
import type { Redis } from 'ioredis';
import type { WindowLimit } from '../../lib/store/rate-limit-store.interface.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { tokenBucket } from '../../test/utils/checks.js';
import { TwoTierStore } from './two-tier.store.js';

const T = 1_700_000_040_000;
let client: Redis;

beforeAll(async () => {
  client = await connectSharedClient();
});
afterAll(() => client.quit());

describe('TwoTierStore: window limits', () => {
  it.each(['fixed-window', 'sliding-window'] as const)(
    '%s: three instances on one Redis admit exactly the quota together',
    async (algorithm) => {
      const keyPrefix = uniquePrefix('two-tier-windows');
      const stores = [0, 1, 2].map(() => new TwoTierStore({ client, keyPrefix, ...ON_TEST_CLOCK }));
      const limit: WindowLimit = { algorithm, quota: 10, windowMs: 60_000 };
      // A hot token bucket on the same requests: its leases must not change what the window admits.
      const checks = [
        { key: 'hot', limit: tokenBucket(1000, 1000), cost: 1 },
        { key: 'quota', limit, cost: 1 },
      ];
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => stores[i % 3]!.consume({ checks, now: T + i })),
      );
      expect(results.filter((result) => result.allowed)).toHaveLength(10);
      for (const store of stores) await store.close();
    },
  );

  it('on the local fallback, each instance enforces localShare of the quota per window', () => {
    const store = new TwoTierStore({
      client,
      keyPrefix: uniquePrefix('two-tier-windows-local'),
      time: 'client',
      localShare: 0.5,
    });
    const limit: WindowLimit = { algorithm: 'fixed-window', quota: 10, windowMs: 60_000 };
    const request = (now: number) => ({ checks: [{ key: 'local', limit, cost: 1 }], now });
    const admitted = Array.from(
      { length: 8 },
      (_, i) => store.localFallback.consumeLocally(request(T + i)).allowed,
    ).filter(Boolean);
    expect(admitted).toHaveLength(5);
    expect(store.localFallback.consumeLocally(request(T + 60_000)).allowed).toBe(true); // the next window
    return store.close();
  });
});
