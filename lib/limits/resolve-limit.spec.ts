import { limitContext } from '../../test/utils/limit-context.js';
import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { resolveLimit, type LimitContext } from './resolve-limit.js';

const context: LimitContext = limitContext();
const resolve = (limit: unknown) => () => resolveLimit(limit as RateLimitOptions, context);

describe('resolveLimit: unknown option names', () => {
  it('a limit using every option is accepted', () => {
    const limit = resolveLimit(
      {
        name: 'search',
        rate: '2/min',
        burst: 20,
        cost: 2,
        key: 'user',
        scope: 'shared',
        failMode: 'closed',
        adaptive: { min: 0.01 },
      },
      context,
    );
    expect([limit.name, limit.burst, limit.cost, limit.failMode]).toEqual([
      'search',
      20,
      2,
      'closed',
    ]);
  });

  it.each([
    [{ rate: '2/min', brust: 20 }, 'limit "default": brust is not an option (did you mean burst?)'],
    [{ rat: 5 }, 'limit "default": rat is not an option (did you mean rate?)'], // before "rate must be ..., got undefined"
    [
      { name: 'search', rate: 1, scop: 'shared' },
      'limit "search": scop is not an option (did you mean scope?)',
    ],
    [{ rate: 1, Key: 'user' }, 'limit "default": Key is not an option (did you mean key?)'],
    [
      { rate: 1, failmode: 'closed' },
      'limit "default": failmode is not an option (did you mean failMode?)',
    ],
    [
      { rate: 1, penalty: 60 },
      'limit "default": penalty is not an option (known options: name, rate, burst, cost, key, scope, failMode, adaptive, charge, isChargeFailure, isFailure, skip, shadow, blockDuration, maxDelay, settle, concurrency, leaseTimeout, algorithm, calendar)',
    ],
    [
      { rate: 100, adaptive: { mni: 5 } },
      'limit "default": adaptive.mni is not an option (did you mean min?)',
    ],
  ])('%j is refused', (limit, message) => {
    expect(resolve(limit)).toThrow(new TypeError(`RateLimit: OrdersController.search, ${message}`));
  });

  it('shows values by type', () => {
    const where = 'RateLimit: OrdersController.search, limit "default":';
    expect(resolve(null)).toThrow(`${where} limit must be an object, got null`);
    expect(resolve([{ rate: 1 }])).toThrow(`${where} limit must be an object, got an array`);
    expect(resolve({ rate: 1, burst: '5' })).toThrow(
      `${where} burst must be a finite number >= 1, got "5"`,
    );
    expect(resolve({ rate: true })).toThrow(/rate must .*, got a boolean \(true\)$/);
    expect(resolve({ rate: 1, cost: 'two' })).toThrow(
      `${where} cost must be a positive number or a function, got "two"`,
    );
    expect(resolve({ rate: 1, key: {} })).toThrow(/key must .*, got an object$/);
    expect(resolve({ rate: 1, scope: true })).toThrow(
      `${where} scope must be 'route' or 'shared', got a boolean (true)`,
    );
    expect(resolve({ rate: 1, failMode: false })).toThrow(
      `${where} failMode must be 'open', 'closed' or 'local', got a boolean (false)`,
    );
  });
});

describe('resolveLimit: horizon (issue 15, item 6)', () => {
  it('names the place, the limit and the option', () => {
    expect(resolve({ rate: '1/day', burst: 1e15 })).toThrow(
      /^RateLimit: OrdersController\.search, limit "default": burst x the interval between tokens .* must be at most 100000000000000 ms/,
    );
    expect(resolve({ rate: 5e-324 })).toThrow(
      /^RateLimit: OrdersController\.search, limit "default": rate must be at least 1e-11 tokens per second/,
    );
  });

  it('an adaptive limit: the rate at adaptive.min too (its burst follows the rate down to 1 token)', () => {
    expect(resolve({ rate: 1, adaptive: { min: 1e-11 } })).not.toThrow();
    expect(resolve({ rate: 1, adaptive: { min: 1e-12 } })).toThrow(
      new TypeError(
        'RateLimit: OrdersController.search, limit "default": adaptive.min must be at least 1e-11 tokens per second (one token per 100000000000000 ms, about 3,169 years), got 1e-12',
      ),
    );
  });
});
