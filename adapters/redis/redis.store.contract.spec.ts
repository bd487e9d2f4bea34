import type { Redis } from 'ioredis';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { describeStoreContract, describeWindowStoreContract } from '../../lib/store/index.js';
import { RedisStore } from './redis.store.js';

let client: Redis;

beforeAll(async () => {
  client = await connectSharedClient();
});

afterAll(async () => {
  await client.quit();
});

// Client time, so the scenarios' explicit `now` values decide. The padding
// keeps keys alive while the virtual clock stands still and real time passes
// (it never changes a decision); the generous timeout keeps a loaded CI
// machine from turning a slow answer into a failure.
describeStoreContract(
  'RedisStore (client time)',
  () =>
    new RedisStore({
      client,
      keyPrefix: uniquePrefix('contract'),
      time: 'client',
      timeoutMs: 5_000,
      expiryPaddingMs: 60_000,
    }),
);
describeWindowStoreContract(
  'RedisStore (client time)',
  () =>
    new RedisStore({
      client,
      keyPrefix: uniquePrefix('window-contract'),
      time: 'client',
      timeoutMs: 5_000,
      expiryPaddingMs: 60_000,
    }),
);
