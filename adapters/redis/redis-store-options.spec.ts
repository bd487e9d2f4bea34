import type { RedisClient } from './redis-client.interface.js';
import { resolveRedisStoreOptions, type RedisStoreOptions } from './redis-store-options.js';

/** Enough of a Redis client for the options: nothing is sent. */
const client: RedisClient = {
  evalsha: () => Promise.reject(new Error('not connected')),
  eval: () => Promise.reject(new Error('not connected')),
  del: () => Promise.reject(new Error('not connected')),
};
const resolve = (options: unknown) => () => resolveRedisStoreOptions(options as RedisStoreOptions);

describe('RedisStore options', () => {
  it('every option, the internal expiryPaddingMs included, is accepted', () => {
    expect(
      resolveRedisStoreOptions({
        client,
        keyPrefix: 'app:',
        timeoutMs: 50,
        time: 'client',
        cluster: false,
        expiryPaddingMs: 10,
      }),
    ).toMatchObject({
      keyPrefix: 'app:',
      timeoutMs: 50,
      clientTime: true,
      cluster: false,
      paddingArg: '10',
    });
  });

  it.each([
    [{ client, timeout: 50 }, 'RedisStore: timeout is not an option (did you mean timeoutMs?)'],
    [
      { client, keyprefix: 'app:' },
      'RedisStore: keyprefix is not an option (did you mean keyPrefix?)',
    ],
    [{ clinet: client }, 'RedisStore: clinet is not an option (did you mean client?)'], // rather than "client must be a Redis client"
    [
      { client, db: 2 },
      'RedisStore: db is not an option (known options: client, keyPrefix, timeoutMs, time, cluster, expiryPaddingMs)',
    ],
  ])('%p is refused', (options, message) => {
    expect(resolve(options)).toThrow(new TypeError(message));
  });

  it('show a wrong value by type', () => {
    expect(resolve({ client, cluster: 'yes' })).toThrow(
      'RedisStore: cluster must be a boolean, got "yes"',
    );
    expect(resolve({ client, keyPrefix: 5 })).toThrow(
      'RedisStore: keyPrefix must be a string, got 5',
    );
    expect(resolve({ client, keyPrefix: ['a'] })).toThrow(
      'RedisStore: keyPrefix must be a string, got an array',
    );
    expect(resolve({ client, timeoutMs: '100' })).toThrow(
      'RedisStore: timeoutMs must be a positive number of milliseconds, got "100"',
    );
  });

  it('expiryPaddingMs is at most MAX_HORIZON_MS (an expiry stays an exact integer Redis accepts)', () => {
    expect(resolveRedisStoreOptions({ client, expiryPaddingMs: 1e14 }).paddingArg).toBe(
      '100000000000000',
    );
    expect(resolve({ client, expiryPaddingMs: 1e17 })).toThrow(
      'RedisStore: expiryPaddingMs must be a number in [0, 100000000000000], got 100000000000000000',
    );
    expect(resolve({ client, expiryPaddingMs: -1 })).toThrow(
      'RedisStore: expiryPaddingMs must be a number in [0, 100000000000000], got -1',
    );
  });
});
