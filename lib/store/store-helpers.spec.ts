import { gcraConsume } from '../algorithms/gcra.js';
import { algorithmOf } from '../algorithms/algorithm.js';
import { describeValue, optionError } from '../errors/option-error.js';
import { RateLimitStoreError, toStoreError } from '../errors/rate-limit-store.error.js';
import { consumeAllOrNothing, type BucketStates } from './all-or-nothing.js';
import { bucketNamespace, SHARED_ROUTE } from './bucket-key.js';
import type { RateLimitCheck, StoreLimit, TokenBucketLimit } from './rate-limit-store.interface.js';
import { RelativeTime } from './relative-time.js';
import { SweptMap } from './swept-map.js';

const bucket = (rate: number, burst: number): TokenBucketLimit => ({
  algorithm: 'token-bucket',
  rate,
  burst,
});
const check = (key: string, rate: number, burst: number, cost = 1): RateLimitCheck => ({
  key,
  limit: bucket(rate, burst),
  cost,
});

class MapStates implements BucketStates {
  readonly map = new Map<string, number>();
  read(key: string) {
    return this.map.get(key);
  }
  write(key: string, state: number) {
    this.map.set(key, state);
  }
}

describe('consumeAllOrNothing', () => {
  it('charges every check when all admit', () => {
    const states = new MapStates();
    const result = consumeAllOrNothing(states, [check('a', 10, 2), check('b', 1, 5, 3)], 0);
    expect(result.allowed).toBe(true);
    expect(result.decisions.map((d) => d.remaining)).toEqual([1, 2]);
    expect([...states.map.keys()]).toEqual(['a', 'b']);
  });

  it('charges none when one denies, and reports the admitting checks as they stand', () => {
    const states = new MapStates();
    states.write('b', gcraConsume(undefined, 0, bucket(1, 1), 1).tat); // b is empty
    const result = consumeAllOrNothing(states, [check('a', 10, 2), check('b', 1, 1)], 0);
    expect(result.allowed).toBe(false);
    expect(result.decisions[0]).toEqual({
      allowed: true,
      remaining: 2,
      retryAfterMs: 0,
      resetMs: 0,
    }); // a: untouched
    expect(result.decisions[1]).toMatchObject({
      allowed: false,
      reason: 'limit',
      retryAfterMs: 1000,
    });
    expect(states.map.has('a')).toBe(false);
  });

  it('refuses a check of an algorithm it does not know', () => {
    expect(() => algorithmOf({ algorithm: 'leaky' } as unknown as StoreLimit)).toThrow(
      'Unknown rate-limit algorithm "leaky"',
    );
  });
});

describe('bucketNamespace', () => {
  it('leads with the algorithm tag, then the limit name and the route (or * when shared)', () => {
    expect(bucketNamespace('token-bucket', 'search', 'OrdersController.search:orders')).toBe(
      'tb|search|OrdersController.search:orders|',
    );
    expect(bucketNamespace('token-bucket', 'login')).toBe(`tb|login|${SHARED_ROUTE}|`);
  });
});

describe('RelativeTime', () => {
  it('measures from the first now it sees, and remembers the last absolute now', () => {
    const time = new RelativeTime();
    expect(time.lastNow).toBe(0);
    expect(time.relative(1_700_000_000_000)).toBe(0);
    expect(time.relative(1_700_000_000_250.5)).toBe(250.5);
    expect(time.relative(1_699_999_999_000)).toBe(-1000); // time that went back stays visible to the algorithm, which clamps it
    expect(time.lastNow).toBe(1_699_999_999_000);
  });
});

describe('SweptMap', () => {
  it('keeps recency order, sweeps in passes and hands out the oldest key for eviction', () => {
    const map = new SweptMap<string, number>();
    expect(map.set('a', 1)).toBe(true);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.set('a', 4)).toBe(false); // moved to the most recent end
    expect(map.oldest()).toBe('b');
    expect([map.nextToSweep(), map.nextToSweep(), map.nextToSweep(), map.nextToSweep()]).toEqual([
      'b',
      'c',
      'a',
      undefined,
    ]);
    map.delete('b');
    expect(map.size).toBe(2);
    map.clear();
    expect([map.size, map.oldest(), map.nextToSweep()]).toEqual([0, undefined, undefined]);
  });
});

describe('errors', () => {
  it('optionError: <where>: <option> <problem>', () => {
    const error = optionError(
      'RedisStore',
      'timeoutMs',
      `must be a positive number of milliseconds, got ${describeValue('100')}`,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe(
      'RedisStore: timeoutMs must be a positive number of milliseconds, got "100"',
    );
    expect([describeValue(true), describeValue(undefined), describeValue(() => 1)]).toEqual([
      'a boolean (true)',
      'undefined',
      'a function',
    ]);
  });

  it('toStoreError wraps with the cause, and leaves a RateLimitStoreError as it is', () => {
    const cause = new Error('ECONNREFUSED');
    const wrapped = toStoreError(cause, 'RedisStore: consume failed');
    expect(wrapped).toBeInstanceOf(RateLimitStoreError);
    expect(wrapped.message).toBe('RedisStore: consume failed: ECONNREFUSED');
    expect(wrapped.cause).toBe(cause);
    expect(toStoreError(wrapped, 'again')).toBe(wrapped);
    expect(toStoreError('down', 'TwoTierStore: Redis failed').message).toBe(
      'TwoTierStore: Redis failed: down',
    );
  });
});
