import { limitContext } from '../../test/utils/limit-context.js';
import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import type { LimitContext } from '../limits/resolve-limit.js';
import {
  DEFAULT_LEASE_TIMEOUT_MS,
  isConcurrencyLimit,
  resolveConcurrencyLimit,
} from './resolve-concurrency-limit.js';

const context: LimitContext = limitContext({
  where: 'GenController.generate',
  routeId: 'r7',
  storeSlots: true,
});

describe('resolveConcurrencyLimit', () => {
  it('a concurrency limit is one that says concurrency', () => {
    expect(isConcurrencyLimit({ concurrency: 2 })).toBe(true);
    expect(isConcurrencyLimit({ rate: 2 })).toBe(false);
    expect(isConcurrencyLimit(undefined)).toBe(false);
  });

  it('defaults: 5 min lease, route scope, the module key; its header member', () => {
    const limit = resolveConcurrencyLimit({ name: 'gen', concurrency: 4 }, context);
    expect(limit).toMatchObject({
      name: 'gen',
      concurrency: 4,
      leaseMs: DEFAULT_LEASE_TIMEOUT_MS,
      namespace: 'cc|gen|r7|',
      failMode: undefined,
    });
    expect(limit.header).toEqual({ name: 'gen', rate: 4, burst: 4, unit: 'concurrent-requests' });
  });

  it('shared scope, a lease as a duration (whole milliseconds), its own fail mode', () => {
    const limit = resolveConcurrencyLimit(
      {
        name: 'gen',
        concurrency: 1,
        scope: 'shared',
        leaseTimeout: '1.5s',
        failMode: 'closed',
      } as RateLimitOptions,
      context,
    );
    expect([limit.namespace, limit.leaseMs, limit.failMode]).toEqual([
      'cc|gen|*|',
      1_500,
      'closed',
    ]);
    expect(resolveConcurrencyLimit({ concurrency: 1, leaseTimeout: 0.4 }, context).leaseMs).toBe(1);
  });

  it("keys are compiled like a rate limit's", () => {
    const limit = resolveConcurrencyLimit({ concurrency: 1, key: 'global' }, context);
    expect(limit.identify({} as never, undefined)).toBe('global');
    expect(() =>
      resolveConcurrencyLimit({ concurrency: 1, key: 'nobody' as never }, context),
    ).toThrow(/^RateLimit: GenController\.generate, limit "default": key must be 'ip', 'user'/);
  });

  it('refuses the window options (algorithm, calendar)', () => {
    // The type refuses them too (ConcurrencyLimitOptions); the run-time check is for JavaScript callers.
    expect(() =>
      resolveConcurrencyLimit({ concurrency: 2, algorithm: 'fixed-window' } as never, context),
    ).toThrow(
      'RateLimit: GenController.generate, limit "default": algorithm cannot be combined with concurrency: is a rate-limit option; a concurrency limit counts requests in flight, not per window',
    );
    expect(() =>
      resolveConcurrencyLimit({ concurrency: 2, calendar: {} } as never, context),
    ).toThrow(/calendar cannot be combined with concurrency/);
  });
});
