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

describe('resolveConcurrencyLimit: the adaptive form', () => {
  const resolve = (concurrency: unknown, extra: object = {}) =>
    resolveConcurrencyLimit({ name: 'inf', concurrency, ...extra } as unknown as RateLimitOptions, {
      ...context,
      storeSlots: false,
    });
  const where = 'RateLimit: GenController.generate, limit "inf": ';

  it('min, max, defaults; counted in the process, so any store will do', () => {
    const limit = resolve({ adaptive: { min: 2, max: 200 } });
    expect(limit.concurrency).toBe(200);
    expect(limit.adaptive!.config.controller).toMatchObject({
      min: 2,
      max: 200,
      initial: 10,
      tolerance: 1,
    });
    expect(limit.adaptive!.config.partitions).toEqual([]);
    expect(limit.adaptive!.config.backlog).toBeUndefined();
  });

  it('partitions, partition and a backlog', () => {
    const limit = resolve({
      adaptive: { min: 1, max: 50, initial: 4, probeInterval: '1min' },
      partitions: { critical: 0.9, batch: 0.1 },
      partition: () => 'batch',
      backlog: { size: 100, timeout: '1s' },
    });
    expect(limit.adaptive!.config).toMatchObject({
      controller: { initial: 4, probeIntervalMs: 60_000 },
      partitions: [
        { name: 'critical', share: 0.9 },
        { name: 'batch', share: 0.1 },
      ],
      backlog: { size: 100, timeoutMs: 1000 },
    });
    expect(limit.adaptive!.indexOf('batch')).toBe(1);
    expect(limit.adaptive!.indexOf('other')).toBe(-1);
  });

  it.each([
    [{}, 'concurrency.adaptive is required in the object form'],
    [{ min: 2, max: 200 }, 'concurrency.min is not an option'],
    [{ adaptive: { min: 0, max: 10 } }, 'concurrency.adaptive.min must be an integer from 1'],
    [{ adaptive: { min: 5, max: 4 } }, 'concurrency.adaptive.max must be at least min (5), got 4'],
    [
      { adaptive: { min: 5, max: 10, initial: 20 } },
      'concurrency.adaptive.initial must be between min (5) and max (10), got 20',
    ],
    [
      { adaptive: { min: 1, max: 10, algorithm: 'vegas' } },
      "concurrency.adaptive.algorithm must be 'gradient'",
    ],
    [
      { adaptive: { min: 1, max: 10, tolerence: 2 } },
      'concurrency.adaptive.tolerence is not an option (did you mean tolerance?)',
    ],
    [
      { adaptive: { min: 1, max: 10 }, partitions: { a: 0.9, b: 0.1 } },
      'concurrency.partition is required with concurrency.partitions',
    ],
    [
      { adaptive: { min: 1, max: 10 }, partition: (): string => 'a' },
      'concurrency.partitions is required with concurrency.partition',
    ],
    [
      {
        adaptive: { min: 1, max: 10 },
        partitions: { a: 0.9, b: 0.2 },
        partition: (): string => 'a',
      },
      'concurrency.partitions shares must add up to at most 1',
    ],
    [
      { adaptive: { min: 1, max: 10 }, partitions: { a: 0, b: 0.2 }, partition: (): string => 'a' },
      'concurrency.partitions.a must be a share in (0, 1]',
    ],
    [
      { adaptive: { min: 1, max: 10 }, backlog: { size: 0, timeout: '1s' } },
      'concurrency.backlog.size must be an integer from 1',
    ],
    [
      { adaptive: { min: 1, max: 10 }, backlog: { size: 10, timeout: '2min' } },
      'concurrency.backlog.timeout must be a positive duration up to a minute',
    ],
  ])('%j: %s', (concurrency, message) => {
    expect(() => resolve(concurrency)).toThrow(where + message);
  });

  it('refuses failMode: no store failure reaches a limit counted in the process', () => {
    expect(() => resolve({ adaptive: { min: 1, max: 10 } }, { failMode: 'closed' })).toThrow(
      `${where}failMode does not apply to an adaptive concurrency limit`,
    );
  });
});
