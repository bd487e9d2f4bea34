import type { Redis } from 'ioredis';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { describeStoreContract, describeWindowStoreContract } from '../../lib/store/index.js';
import { TwoTierStore } from './two-tier.store.js';

let client: Redis;

beforeAll(async () => {
  client = await connectSharedClient();
});

afterAll(async () => {
  await client.quit();
});

// As for RedisStore: client time, so the scenarios' `now` values decide. Leases are
// on (defaults): the scenarios' hot buckets lease tokens and spend them
// locally, and the answers must still be the algorithm's.
describeStoreContract(
  'TwoTierStore (client time)',
  () =>
    new TwoTierStore({ client, keyPrefix: uniquePrefix('two-tier-contract'), ...ON_TEST_CLOCK }),
);
// Window checks go straight to Redis (never leased): the same answers as RedisStore's.
describeWindowStoreContract(
  'TwoTierStore (client time)',
  () =>
    new TwoTierStore({
      client,
      keyPrefix: uniquePrefix('two-tier-window-contract'),
      ...ON_TEST_CLOCK,
    }),
);
