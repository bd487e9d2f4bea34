import type { Redis } from 'ioredis';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
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

// As for RedisStore: client time, so the scenarios' `now` values decide;
// padding keeps keys alive while the virtual clock stands still. Leases are
// on (defaults): the scenarios' hot buckets lease tokens and spend them
// locally, and the answers must still be the algorithm's.
describeStoreContract(
  'TwoTierStore (client time)',
  () =>
    new TwoTierStore({
      client,
      keyPrefix: uniquePrefix('two-tier-contract'),
      time: 'client',
      timeoutMs: 5_000,
      expiryPaddingMs: 60_000,
    }),
);
// Window checks go straight to Redis (never leased): the same answers as RedisStore's.
describeWindowStoreContract(
  'TwoTierStore (client time)',
  () =>
    new TwoTierStore({
      client,
      keyPrefix: uniquePrefix('two-tier-window-contract'),
      time: 'client',
      timeoutMs: 5_000,
      expiryPaddingMs: 60_000,
    }),
);
