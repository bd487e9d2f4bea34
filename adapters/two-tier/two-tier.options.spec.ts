import { RedisStore, type RedisClient } from '../redis/index.js';
import { resolveTwoTierOptions, type TwoTierStoreOptions } from './two-tier.options.js';

/** Enough of a Redis client for the stores' constructors: nothing is sent. */
const client: RedisClient = {
  evalsha: () => Promise.reject(new Error('not connected')),
  eval: () => Promise.reject(new Error('not connected')),
  del: () => Promise.reject(new Error('not connected')),
};

const messageOf = (options: unknown): string => {
  try {
    resolveTwoTierOptions(options as TwoTierStoreOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
  throw new Error('no error thrown');
};

describe('TwoTierStore options', () => {
  it('apply their defaults, and build the RedisStore from client and the Redis options', () => {
    const settings = resolveTwoTierOptions({ client, keyPrefix: 'app:' });
    expect(settings).toMatchObject({
      ownsRedis: true,
      localShare: 1,
      leaseTtlMs: 1_000,
      maxLeaseShare: 0.25,
      maxKeys: 100_000,
      probeIntervalMs: 1_000,
    });
    expect(settings.redis).toBeInstanceOf(RedisStore);
    const before = performance.now();
    const now = settings.clock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(performance.now());
  });

  it('take localShare as 1 / instances unless given, and keep every option given', () => {
    const clock = { now: () => 0 };
    expect(resolveTwoTierOptions({ client, instances: 4 }).localShare).toBe(0.25);
    const settings = resolveTwoTierOptions({
      client,
      instances: 4,
      localShare: 0.5,
      leaseTtlMs: 250,
      maxLeaseShare: 0,
      maxKeys: 10,
      probeIntervalMs: 50,
      clock,
    });
    expect(settings).toMatchObject({
      localShare: 0.5,
      leaseTtlMs: 250,
      maxLeaseShare: 0,
      maxKeys: 10,
      probeIntervalMs: 50,
      clock,
    });
  });

  it('use a RedisStore given as it is, and leave it open (not owned)', () => {
    const redis = new RedisStore({ client });
    const settings = resolveTwoTierOptions({ redis, keyPrefix: undefined });
    expect(settings.redis).toBe(redis);
    expect(settings.ownsRedis).toBe(false);
  });

  it('say which option is wrong, and what was given', () => {
    const redis = new RedisStore({ client });
    expect(messageOf(undefined)).toBe(
      'TwoTierStore: options must be an object with client or redis',
    );
    expect(messageOf({})).toBe(
      'TwoTierStore: client (a Redis client) or redis (a RedisStore) is required',
    );
    expect(messageOf({ client: {} })).toBe(
      'RedisStore: client must be a Redis client with evalsha, eval and del (e.g. an ioredis Redis or Cluster)',
    );
    expect(messageOf({ redis: {} })).toBe('TwoTierStore: redis must be a RedisStore');
    expect(messageOf({ redis, client })).toBe(
      'TwoTierStore: client cannot be combined with redis: give either client or redis, not both',
    );
    expect(messageOf({ redis, timeoutMs: 5, keyPrefix: 'x' })).toBe(
      'TwoTierStore: timeoutMs, keyPrefix cannot be combined with redis (set them on the RedisStore)',
    );
    expect(messageOf({ client, instances: 0 })).toBe(
      'TwoTierStore: instances must be a positive integer, got 0',
    );
    expect(messageOf({ client, instances: 1.5 })).toBe(
      'TwoTierStore: instances must be a positive integer, got 1.5',
    );
    expect(messageOf({ client, localShare: 0 })).toBe(
      'TwoTierStore: localShare must be a number in (0, 1], got 0',
    );
    expect(messageOf({ client, localShare: '0.5' })).toBe(
      'TwoTierStore: localShare must be a number in (0, 1], got "0.5"',
    );
    expect(messageOf({ client, leaseTtlMs: 0 })).toBe(
      'TwoTierStore: leaseTtlMs must be a positive number of milliseconds, got 0',
    );
    expect(messageOf({ client, leaseTtlMs: 2 ** 31 })).toBe(
      'TwoTierStore: leaseTtlMs must be a positive number of milliseconds, got 2147483648',
    );
    expect(messageOf({ client, probeIntervalMs: -1 })).toBe(
      'TwoTierStore: probeIntervalMs must be a positive number of milliseconds, got -1',
    );
    expect(messageOf({ client, maxLeaseShare: 2 })).toBe(
      'TwoTierStore: maxLeaseShare must be a number in [0, 1], got 2',
    );
    expect(messageOf({ client, maxKeys: 0 })).toBe(
      'TwoTierStore: maxKeys must be a positive integer, got 0',
    );
    expect(messageOf({ client, clock: {} })).toBe('TwoTierStore: clock must have a now() method');
    expect(messageOf({ client, keyPrefix: '{x}' })).toMatch(
      /^RedisStore: keyPrefix must not contain/,
    );
  });

  it('check them in a fixed order: the first wrong option is the one reported', () => {
    expect(messageOf({ client, instances: 0, localShare: 2, leaseTtlMs: 0, maxKeys: 0 })).toMatch(
      /instances/,
    );
    expect(messageOf({ client, leaseTtlMs: 0, probeIntervalMs: 0, maxLeaseShare: 2 })).toMatch(
      /leaseTtlMs/,
    );
    expect(messageOf({ client, probeIntervalMs: 0, maxLeaseShare: 2, maxKeys: 0 })).toMatch(
      /probeIntervalMs/,
    );
    expect(messageOf({ client, maxLeaseShare: 2, maxKeys: 0, clock: {} })).toMatch(/maxLeaseShare/);
  });

  it("refuse an unknown name as the TwoTierStore's, its own and the Redis ones alike, suggesting the closest", () => {
    expect(messageOf({ client, leaseTTLms: 500 })).toBe(
      'TwoTierStore: leaseTTLms is not an option (did you mean leaseTtlMs?)',
    );
    expect(messageOf({ client, localshare: 0.5 })).toBe(
      'TwoTierStore: localshare is not an option (did you mean localShare?)',
    );
    expect(messageOf({ client, timeout: 50 })).toBe(
      'TwoTierStore: timeout is not an option (did you mean timeoutMs?)',
    );
    expect(messageOf({ redis: new RedisStore({ client }), instance: 3 })).toBe(
      'TwoTierStore: instance is not an option (did you mean instances?)',
    );
    expect(messageOf({ client, blockDuration: 1 })).toMatch(
      /^TwoTierStore: blockDuration is not an option \(known options: client, redis, instances, .*, expiryPaddingMs\)$/,
    );
  });

  it('accept every option, the Redis ones and the internal expiryPaddingMs included', () => {
    const settings = resolveTwoTierOptions({
      client,
      instances: 2,
      localShare: 0.5,
      leaseTtlMs: 500,
      maxLeaseShare: 0.1,
      maxKeys: 10,
      probeIntervalMs: 100,
      clock: { now: () => 0 },
      keyPrefix: 'app:',
      timeoutMs: 50,
      time: 'client',
      cluster: false,
      expiryPaddingMs: 5,
    });
    expect(settings).toMatchObject({ localShare: 0.5, leaseTtlMs: 500, maxKeys: 10 });
  });
});
