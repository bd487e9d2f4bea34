import { limitContext } from '../../test/utils/limit-context.js';
import type { ExecutionContext } from '@nestjs/common';
import {
  isConcurrencyLimit,
  resolveConcurrencyLimit,
} from '../concurrency/resolve-concurrency-limit.js';
import { resolveLimit, type LimitContext } from '../limits/resolve-limit.js';
import type { AdaptiveConcurrencyOptions } from './adaptive-concurrency-options.interface.js';
import type { RateLimitModuleOptions } from './rate-limit-module-options.interface.js';
import type {
  ConcurrencyLimitOptions,
  DynamicBurst,
  DynamicRate,
  Rate,
  RateLimitAlgorithm,
  RateLimitOptions,
  TokenBucketLimitOptions,
  WindowLimitOptions,
} from './rate-limit-options.interface.js';

/**
 * What the types of a limit refuse and accept. The `@ts-expect-error` lines
 * are checked by `npm run typecheck` (a line that compiles fails it); the
 * tests check that start-up refuses (and accepts) the same limits, the
 * run-time checks being what JavaScript callers get.
 */

const context: LimitContext = limitContext({ storeSlots: true });

/** Start-up validation of one limit, as the module does it. */
function resolve(limit: RateLimitOptions): unknown {
  return isConcurrencyLimit(limit)
    ? resolveConcurrencyLimit(limit, context)
    : resolveLimit(limit, context);
}

const plan: DynamicRate = () => '10/s';
const burstOfPlan: DynamicBurst = () => 5;

describe('RateLimitOptions: accepted', () => {
  const accepted: [string, RateLimitOptions][] = [
    ['a token bucket, rate only', { rate: 10 }],
    ['a token bucket, named algorithm', { algorithm: 'token-bucket', rate: '100/min', burst: 20 }],
    [
      'a token bucket with its own options',
      {
        name: 'login',
        rate: '5/min',
        burst: 5,
        cost: 1,
        key: 'user',
        scope: 'shared',
        failMode: 'closed',
        charge: 'failures',
        isChargeFailure: (outcome) => outcome.failed,
        skip: () => false,
        blockDuration: '15min',
        maxDelay: '1s',
      },
    ],
    ['an adaptive token bucket', { rate: 100, adaptive: { min: 10, max: 200 } }],
    ['a shadow token bucket', { rate: 100, shadow: true }],
    ['rate and burst functions of the call', { rate: plan, burst: burstOfPlan }],
    [
      'a fixed window on the calendar',
      {
        name: 'daily',
        rate: '1000/day',
        algorithm: 'fixed-window',
        calendar: { timeZone: 'Europe/Paris' },
      },
    ],
    [
      'a sliding window charging failures',
      {
        rate: '100/min',
        algorithm: 'sliding-window',
        cost: 2,
        charge: 'failures',
        shadow: false,
        skip: async () => false,
      },
    ],
    ['a concurrency limit', { name: 'inflight', concurrency: 4 }],
    [
      'a concurrency limit with its own options',
      {
        concurrency: 4,
        leaseTimeout: '30s',
        key: 'user',
        scope: 'shared',
        failMode: 'closed',
        shadow: false,
      },
    ],
  ];

  it.each(accepted)('%s, by the type and at start-up', (_, limit) => {
    expect(resolve(limit)).toBeDefined();
  });

  it('each kind has a type of its own', () => {
    const bucket: TokenBucketLimitOptions = { rate: 10, burst: 5 };
    const window: WindowLimitOptions = { algorithm: 'fixed-window', rate: '10/min' };
    const concurrency: ConcurrencyLimitOptions = { concurrency: 2 };
    const all: RateLimitOptions[] = [bucket, window, concurrency];
    expect(all.map((limit) => isConcurrencyLimit(limit))).toEqual([false, false, true]);
  });

  it('the module takes limits of every kind, and a defaults limit', () => {
    const options: RateLimitModuleOptions = {
      defaults: { rate: '100/min', key: 'user' },
      limits: [
        { name: 'global', rate: 1000, key: 'global' },
        { name: 'daily', rate: '10000/day', algorithm: 'fixed-window' },
        { name: 'inflight', concurrency: 50 },
      ],
    };
    expect(options.limits).toHaveLength(3);
  });

  it('every option reads on the union (each kind declares what it refuses as never)', () => {
    const read = (limit: RateLimitOptions) => {
      const rate: Rate | DynamicRate | undefined = limit.rate;
      const burst: number | DynamicBurst | undefined = limit.burst;
      const algorithm: RateLimitAlgorithm | undefined = limit.algorithm;
      const shadow: boolean | undefined = limit.shadow;
      const concurrency: number | AdaptiveConcurrencyOptions | undefined = limit.concurrency;
      const cost: number | ((context: ExecutionContext) => number) | undefined = limit.cost;
      return [
        limit.name,
        rate,
        burst,
        algorithm,
        shadow,
        concurrency,
        cost,
        limit.calendar,
        limit.leaseTimeout,
        limit.adaptive,
        limit.maxDelay,
        limit.blockDuration,
        limit.skip,
        limit.charge,
        limit.isChargeFailure,
        limit.isFailure,
      ];
    };
    expect(read({ rate: 10 })).toHaveLength(16);
  });

  it('`concurrency` and `algorithm` tell the kinds apart', () => {
    const kind = (limit: RateLimitOptions): string => {
      if (limit.concurrency !== undefined) {
        const concurrency: ConcurrencyLimitOptions = limit;
        return `concurrency ${concurrency.concurrency}`;
      }
      if (limit.algorithm === 'fixed-window' || limit.algorithm === 'sliding-window') {
        const window: WindowLimitOptions = limit;
        return window.algorithm;
      }
      if (limit.algorithm === undefined || limit.algorithm === 'token-bucket') {
        const bucket: TokenBucketLimitOptions = limit;
        return bucket.algorithm ?? 'token-bucket';
      }
      return 'none';
    };
    expect([
      kind({ concurrency: 3 }),
      kind({ rate: '1/s', algorithm: 'sliding-window' }),
      kind({ rate: 1 }),
    ]).toEqual(['concurrency 3', 'sliding-window', 'token-bucket']);
  });
});

describe('RateLimitOptions: refused by the type, and at start-up', () => {
  // Each literal is on the line after its @ts-expect-error: if the type ever accepts it, typecheck fails.
  const refused: [string, RateLimitOptions, RegExp][] = [
    // A concurrency limit refuses every rate-limit option (RATE_ONLY in resolve-concurrency-limit.ts).
    [
      'concurrency with a rate',
      // @ts-expect-error a concurrency limit has no rate
      { concurrency: 4, rate: 10 },
      /rate cannot be combined with concurrency/,
    ],
    [
      'concurrency with a burst',
      // @ts-expect-error nor a burst
      { concurrency: 4, burst: 2 },
      /burst cannot be combined with concurrency/,
    ],
    [
      'concurrency with a cost',
      // @ts-expect-error nor a cost
      { concurrency: 4, cost: 2 },
      /cost cannot be combined with concurrency/,
    ],
    [
      'concurrency, adaptive',
      // @ts-expect-error nor adaptive
      { concurrency: 4, adaptive: {} },
      /adaptive cannot be combined with concurrency/,
    ],
    [
      'concurrency with charge',
      // @ts-expect-error nor charge
      { concurrency: 4, charge: 'failures' },
      /charge cannot be combined with concurrency/,
    ],
    [
      'concurrency with isChargeFailure',
      // @ts-expect-error nor isChargeFailure
      { concurrency: 4, isChargeFailure: () => true },
      /isChargeFailure cannot be combined with concurrency/,
    ],
    [
      'concurrency with isFailure (the deprecated name)',
      // @ts-expect-error nor isFailure
      { concurrency: 4, isFailure: () => true },
      /isFailure cannot be combined with concurrency/,
    ],
    [
      'concurrency with skip',
      // @ts-expect-error nor skip
      { concurrency: 4, skip: () => false },
      /skip cannot be combined with concurrency/,
    ],
    [
      'concurrency with blockDuration',
      // @ts-expect-error nor blockDuration
      { concurrency: 4, blockDuration: '1min' },
      /blockDuration cannot be combined with concurrency/,
    ],
    [
      'concurrency with maxDelay',
      // @ts-expect-error nor maxDelay
      { concurrency: 4, maxDelay: '1s' },
      /maxDelay cannot be combined with concurrency/,
    ],
    [
      'concurrency with an algorithm',
      // @ts-expect-error nor an algorithm
      { concurrency: 4, algorithm: 'fixed-window' },
      /algorithm cannot be combined with concurrency/,
    ],
    [
      'concurrency with a calendar',
      // @ts-expect-error nor a calendar
      { concurrency: 4, calendar: {} },
      /calendar cannot be combined with concurrency/,
    ],
    [
      'concurrency in shadow mode',
      // @ts-expect-error nor shadow mode (only shadow: false)
      { concurrency: 4, shadow: true },
      /shadow is not supported on a concurrency limit/,
    ],
    // A window refuses what only a token bucket has (REFUSED_WITH_WINDOWS in resolve-window.ts).
    [
      'a window with a burst',
      // @ts-expect-error a window has no burst
      { algorithm: 'fixed-window', rate: '10/s', burst: 5 },
      /burst has no meaning for a window/,
    ],
    [
      'an adaptive window',
      // @ts-expect-error nor adaptive
      { algorithm: 'sliding-window', rate: '10/s', adaptive: {} },
      /adaptive only works with algorithm 'token-bucket'/,
    ],
    [
      'a window with maxDelay',
      // @ts-expect-error nor maxDelay
      { algorithm: 'fixed-window', rate: '10/s', maxDelay: 100 },
      /maxDelay only works with algorithm 'token-bucket'/,
    ],
    [
      'a window with blockDuration',
      // @ts-expect-error nor blockDuration
      { algorithm: 'sliding-window', rate: '10/s', blockDuration: '1min' },
      /blockDuration only works with algorithm 'token-bucket'/,
    ],
    [
      'a window with a rate function',
      // @ts-expect-error nor a rate function
      { algorithm: 'fixed-window', rate: plan },
      /rate must be a fixed rate with algorithm 'fixed-window', not a function/,
    ],
    // A rate limit refuses the options of the other kinds.
    [
      'a token bucket with leaseTimeout',
      // @ts-expect-error leaseTimeout is a concurrency limit's
      { rate: 10, leaseTimeout: '30s' },
      /leaseTimeout only applies to a concurrency limit/,
    ],
    [
      'a window with leaseTimeout',
      // @ts-expect-error so on a window
      { algorithm: 'fixed-window', rate: '10/s', leaseTimeout: 1_000 },
      /leaseTimeout only applies to a concurrency limit/,
    ],
    [
      'a token bucket on the calendar',
      // @ts-expect-error calendar is a fixed window's
      { rate: '1000/day', calendar: {} },
      /calendar only applies to algorithm 'fixed-window'/,
    ],
    [
      'an unknown algorithm',
      // @ts-expect-error an algorithm that is not one
      { rate: 10, algorithm: 'leaky-bucket' },
      /algorithm must be 'token-bucket', 'fixed-window' or 'sliding-window'/,
    ],
  ];

  it.each(refused)('%s', (_, limit, error) => {
    expect(() => resolve(limit)).toThrow(error);
  });
});

describe('RateLimitOptions: left to start-up (the types do not say)', () => {
  it.each([
    ['a rate limit without a rate', {}, /rate must be/],
    [
      'a sliding window on the calendar',
      { algorithm: 'sliding-window', rate: '1000/day', calendar: {} },
      /calendar only applies to algorithm 'fixed-window'/,
    ],
    [
      'isChargeFailure without charge',
      { rate: 10, isChargeFailure: () => true },
      /isChargeFailure only applies with charge/,
    ],
    [
      'isFailure (the deprecated name) without charge',
      { rate: 10, isFailure: () => true },
      /isFailure only applies with charge/,
    ],
    [
      'shadow with adaptive',
      { rate: 10, shadow: true, adaptive: {} },
      /shadow cannot be combined with adaptive/,
    ],
  ] satisfies [string, RateLimitOptions, RegExp][])('%s', (_, limit, error) => {
    expect(() => resolve(limit)).toThrow(error);
  });
});
