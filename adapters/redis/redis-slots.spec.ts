import type { Redis } from 'ioredis';
import { connectSharedClient } from '../../test/utils/redis-client.js';
import { uniquePrefix } from '../../test/utils/redis-harness.js';
import { RedisStore } from './index.js';
import { redisKey } from './redis-keys.js';

/**
 * Releases that win over late acquisitions: the gate releases the id of an
 * acquisition it gave up waiting for (a Redis stall past `timeoutMs`), and
 * that release may reach Redis before the acquisition does (another
 * connection, a resend after a reconnection). The id is then refused.
 */
describe('RedisStore slots: a release before its acquisition', () => {
  let client: Redis;
  let store: RedisStore;
  let keyPrefix: string;
  const key = 'cc|gen|r1|k=1';

  beforeAll(async () => {
    client = await connectSharedClient();
  });
  beforeEach(() => {
    keyPrefix = uniquePrefix('slots-released');
    store = new RedisStore({ client, keyPrefix, timeoutMs: 5_000 });
  });
  afterAll(() => client?.disconnect());

  it('a late acquisition of a released id is refused and holds nothing; other ids are not concerned', async () => {
    await store.slots.release({ key, id: 'late', leaseMs: 10_000, now: 0 });
    expect(
      await store.slots.acquire({ key, limit: 2, id: 'late', leaseMs: 10_000, now: 0 }),
    ).toEqual({ allowed: false, inFlight: 0 });
    expect(await store.slots.inFlight(key)).toBe(0);
    expect(
      await store.slots.acquire({ key, limit: 2, id: 'other', leaseMs: 10_000, now: 0 }),
    ).toEqual({ allowed: true, inFlight: 1 });
  });

  it('a release of a slot held removes it and remembers nothing; of an id never acquired, changes no slot', async () => {
    await store.slots.acquire({ key, limit: 2, id: 'a', leaseMs: 10_000, now: 0 });
    await store.slots.release({ key, id: 'a', leaseMs: 10_000, now: 0 });
    const slotKey = redisKey(keyPrefix, key);
    expect(await client.exists(`${slotKey}:released`)).toBe(0);
    await store.slots.acquire({ key, limit: 2, id: 'b', leaseMs: 10_000, now: 0 });
    await store.slots.release({ key, id: 'never', leaseMs: 10_000, now: 0 });
    expect(await store.slots.inFlight(key)).toBe(1);
  });

  it('the released ids are forgotten after the lease: the key expires by itself', async () => {
    await store.slots.release({ key, id: 'x', leaseMs: 200, now: 0 });
    const released = `${redisKey(keyPrefix, key)}:released`;
    const ttl = await client.pttl(released);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(200);
  });
});
