import type { Redis } from 'ioredis';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../../test/utils/test-clock-store-options.js';
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

// Client time, so the scenarios' explicit `now` values decide.
describeStoreContract(
  'RedisStore (client time)',
  () => new RedisStore({ client, keyPrefix: uniquePrefix('contract'), ...ON_TEST_CLOCK }),
);
describeWindowStoreContract(
  'RedisStore (client time)',
  () => new RedisStore({ client, keyPrefix: uniquePrefix('window-contract'), ...ON_TEST_CLOCK }),
);
