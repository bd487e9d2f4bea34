import { fixedWindowConsume } from '../../lib/algorithms/fixed-window.js';
import type { RateLimitDecision } from '../../lib/algorithms/rate-limit-decision.js';
import { slidingWindowConsume } from '../../lib/algorithms/sliding-window.js';
import type { WindowState } from '../../lib/algorithms/window-state.js';
import type { WindowLimit } from '../../lib/store/rate-limit-store.interface.js';

/**
 * The shared scenario table of the window algorithms: the TypeScript
 * functions (`lib/algorithms/fixed-window.spec.ts`, `sliding-window.spec.ts`)
 * and the Redis Lua (`adapters/redis/redis.window-scenarios.spec.ts`) run it.
 *
 * Runners start from an absent key and carry the state of each admitted step
 * into the next (a denial stores nothing), as a store does. Every number is
 * exact and compared with `Object.is`, so the sliding scenarios use a window
 * of 1024 ms, quotas of 4 and times on multiples of 2^40 ms, where every
 * weight is a binary fraction. Every expectation was derived by hand:
 *
 * Fixed window W, quota N: window = [floor(t / W) W, + W) (or the calendar
 * day / month); admitted iff count + cost <= N; remaining = floor(N - count);
 * retryAfterMs (denied) = end - t; resetMs = end - t when count > 0, else 0;
 * effectiveWindowMs = end - t.
 *
 * Sliding window: elapsed = t - start; estimate = previous (1 - elapsed / W)
 * + current; admitted iff estimate + cost <= N; waits follow the weight:
 * within the window, e = W (1 - (N - current - cost) / previous); past it,
 * (W - elapsed) + W (1 - (N - cost) / current). resetMs: until the estimate
 * is 0; effectiveWindowMs: after spending `remaining`, until one more fits.
 *
 * A stored window later than t (the clock went back) is taken as the current
 * one, with elapsed 0 and waits counted from the real t.
 */
export interface WindowStep {
  readonly at: number;
  readonly cost: number;
  readonly expect: Partial<RateLimitDecision>;
}

export interface WindowScenario {
  readonly name: string;
  readonly limit: WindowLimit;
  readonly steps: readonly WindowStep[];
}

/** 2^40 ms: a multiple of every power-of-two window used below. */
const P = 2 ** 40;
/** A realistic epoch, a multiple of 10 s. */
const T = 1_700_000_000_000;
const HOUR = 3_600_000;
const utc = (iso: string): number => Date.parse(iso);

const fixed = (quota: number, windowMs: number): WindowLimit => ({
  algorithm: 'fixed-window',
  quota,
  windowMs,
});
const sliding = (quota: number, windowMs: number): WindowLimit => ({
  algorithm: 'sliding-window',
  quota,
  windowMs,
});
const calendar = (quota: number, unit: 'day' | 'month', timeZone: string): WindowLimit => ({
  algorithm: 'fixed-window',
  quota,
  windowMs: unit === 'day' ? 86_400_000 : 30 * 86_400_000,
  calendar: { unit, timeZone },
});

export const windowScenarios: readonly WindowScenario[] = [
  {
    name: 'fixed: N per window, denied until the window ends, a fresh count at the edge',
    limit: fixed(3, 1000),
    steps: [
      {
        at: T,
        cost: 1,
        expect: {
          allowed: true,
          remaining: 2,
          retryAfterMs: 0,
          resetMs: 1000,
          effectiveWindowMs: 1000,
        },
      },
      {
        at: T + 100,
        cost: 1,
        expect: { allowed: true, remaining: 1, resetMs: 900, effectiveWindowMs: 900 },
      },
      {
        at: T + 500,
        cost: 1,
        expect: { allowed: true, remaining: 0, resetMs: 500, effectiveWindowMs: 500 },
      },
      {
        at: T + 999,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1,
          resetMs: 1,
          effectiveWindowMs: 1,
        },
      },
      {
        at: T + 1000,
        cost: 1,
        expect: { allowed: true, remaining: 2, resetMs: 1000, effectiveWindowMs: 1000 },
      },
    ],
  },
  {
    name: 'fixed: up to 2N within 2 ms across an edge',
    limit: fixed(3, 1000),
    steps: [
      {
        at: T + 999,
        cost: 3,
        expect: { allowed: true, remaining: 0, resetMs: 1, effectiveWindowMs: 1 },
      },
      { at: T + 1000, cost: 3, expect: { allowed: true, remaining: 0, resetMs: 1000 } },
      { at: T + 1001, cost: 1, expect: { allowed: false, retryAfterMs: 999 } },
    ],
  },
  {
    name: 'fixed: cost > 1, and a cost the window cannot hold now',
    limit: fixed(5, 10_000),
    steps: [
      { at: T, cost: 3, expect: { allowed: true, remaining: 2, resetMs: 10_000 } },
      {
        at: T + 10,
        cost: 3,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 2,
          retryAfterMs: 9990,
          resetMs: 9990,
        },
      },
      { at: T + 20, cost: 2, expect: { allowed: true, remaining: 0, resetMs: 9980 } },
    ],
  },
  {
    name: 'fixed: a cost above the quota is never admitted',
    limit: fixed(5, 1000),
    steps: [
      {
        at: T + 250,
        cost: 6,
        expect: {
          allowed: false,
          reason: 'cost-exceeds-burst',
          remaining: 5,
          retryAfterMs: Infinity,
          resetMs: 0,
          effectiveWindowMs: 750,
        },
      },
      { at: T + 250, cost: 5, expect: { allowed: true, remaining: 0, resetMs: 750 } },
    ],
  },
  {
    name: 'fixed: fractional costs add up to the quota, not past it',
    limit: fixed(1, 1000),
    steps: [
      ...Array.from({ length: 10 }, (_, i): WindowStep => ({
        at: T + i,
        cost: 0.1,
        expect: { allowed: true, remaining: 0 },
      })),
      { at: T + 10, cost: 0.1, expect: { allowed: false, retryAfterMs: 990 } },
    ],
  },
  {
    name: 'fixed: a time that is a fraction of a millisecond',
    limit: fixed(1, 1000),
    steps: [
      {
        at: T + 999.5,
        cost: 1,
        expect: { allowed: true, remaining: 0, resetMs: 0.5, effectiveWindowMs: 0.5 },
      },
      { at: T + 999.75, cost: 1, expect: { allowed: false, retryAfterMs: 0.25 } },
      { at: T + 1000, cost: 1, expect: { allowed: true } },
    ],
  },
  {
    name: 'fixed: a clock that goes back keeps the later window, and waits from the real time',
    limit: fixed(2, 1000),
    steps: [
      { at: T + 1500, cost: 1, expect: { allowed: true, remaining: 1, resetMs: 500 } },
      {
        at: T + 800,
        cost: 1,
        expect: { allowed: true, remaining: 0, resetMs: 1200, effectiveWindowMs: 1200 },
      },
      { at: T + 900, cost: 1, expect: { allowed: false, retryAfterMs: 1100, resetMs: 1100 } },
      { at: T + 2000, cost: 1, expect: { allowed: true, remaining: 1, resetMs: 1000 } },
    ],
  },
  {
    name: 'sliding: the previous window weighs by its overlap with the last window',
    limit: sliding(4, 1024),
    steps: [
      {
        at: P,
        cost: 4,
        expect: {
          allowed: true,
          remaining: 0,
          retryAfterMs: 0,
          resetMs: 2048,
          effectiveWindowMs: 1280,
        },
      },
      {
        at: P + 512,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 768,
          resetMs: 1536,
          effectiveWindowMs: 768,
        },
      },
      // previous 4 at weight 3/4: estimate 3, one fits.
      {
        at: P + 1280,
        cost: 1,
        expect: { allowed: true, remaining: 0, resetMs: 1792, effectiveWindowMs: 256 },
      },
      { at: P + 1280, cost: 1, expect: { allowed: false, retryAfterMs: 256 } },
      // weight 1/2: estimate 4 x 1/2 + 1 = 3.
      { at: P + 1536, cost: 1, expect: { allowed: true, remaining: 0 } },
      { at: P + 1536, cost: 2, expect: { allowed: false, retryAfterMs: 512 } },
      // Two windows later everything has slid out.
      { at: P + 3072, cost: 4, expect: { allowed: true, remaining: 0, resetMs: 2048 } },
    ],
  },
  {
    name: 'sliding: a cost above the quota is never admitted',
    limit: sliding(4, 1024),
    steps: [
      {
        at: P,
        cost: 5,
        expect: {
          allowed: false,
          reason: 'cost-exceeds-burst',
          remaining: 4,
          retryAfterMs: Infinity,
          resetMs: 0,
          effectiveWindowMs: 1280,
        },
      },
    ],
  },
  {
    name: 'sliding: a clock that goes back keeps the later window, elapsed 0, waits from the real time',
    limit: sliding(4, 1024),
    steps: [
      { at: P + 1536, cost: 2, expect: { allowed: true, remaining: 2, resetMs: 1536 } },
      {
        at: P + 512,
        cost: 2,
        expect: { allowed: true, remaining: 0, resetMs: 2560, effectiveWindowMs: 1792 },
      },
      { at: P + 600, cost: 1, expect: { allowed: false, retryAfterMs: 1704 } },
    ],
  },
  {
    name: 'calendar: a UTC day resets at midnight UTC',
    limit: calendar(2, 'day', 'UTC'),
    steps: [
      {
        at: utc('2026-03-10T22:00:00Z'),
        cost: 2,
        expect: { allowed: true, remaining: 0, resetMs: 2 * HOUR, effectiveWindowMs: 2 * HOUR },
      },
      { at: utc('2026-03-10T23:59:59Z'), cost: 1, expect: { allowed: false, retryAfterMs: 1000 } },
      {
        at: utc('2026-03-11T00:00:00Z'),
        cost: 1,
        expect: { allowed: true, remaining: 1, resetMs: 24 * HOUR },
      },
    ],
  },
  {
    name: 'calendar: Europe/Paris, the 23-hour day daylight saving starts (2026-03-29)',
    limit: calendar(2, 'day', 'Europe/Paris'),
    steps: [
      // The day started at 2026-03-28T23:00Z (midnight, UTC+1) and ends at 2026-03-29T22:00Z (midnight, UTC+2).
      {
        at: utc('2026-03-29T12:00:00Z'),
        cost: 2,
        expect: { allowed: true, remaining: 0, resetMs: 10 * HOUR },
      },
      { at: utc('2026-03-29T21:00:00Z'), cost: 1, expect: { allowed: false, retryAfterMs: HOUR } },
      {
        at: utc('2026-03-29T22:00:00Z'),
        cost: 1,
        expect: { allowed: true, remaining: 1, resetMs: 24 * HOUR },
      },
    ],
  },
  {
    name: 'calendar: Europe/Paris, the 25-hour day daylight saving ends (2026-10-25)',
    limit: calendar(1, 'day', 'Europe/Paris'),
    steps: [
      {
        at: utc('2026-10-24T22:00:00Z'),
        cost: 1,
        expect: { allowed: true, remaining: 0, resetMs: 25 * HOUR },
      },
      { at: utc('2026-10-25T22:59:59Z'), cost: 1, expect: { allowed: false, retryAfterMs: 1000 } },
      { at: utc('2026-10-25T23:00:00Z'), cost: 1, expect: { allowed: true } },
    ],
  },
  {
    name: 'calendar: a UTC month, February 2026 (28 days)',
    limit: calendar(3, 'month', 'UTC'),
    steps: [
      {
        at: utc('2026-02-15T00:00:00Z'),
        cost: 3,
        expect: { allowed: true, remaining: 0, resetMs: 14 * 24 * HOUR },
      },
      { at: utc('2026-02-28T23:00:00Z'), cost: 1, expect: { allowed: false, retryAfterMs: HOUR } },
      {
        at: utc('2026-03-01T00:00:00Z'),
        cost: 1,
        expect: { allowed: true, remaining: 2, resetMs: 31 * 24 * HOUR },
      },
    ],
  },
  {
    name: 'calendar: Asia/Kolkata (UTC+5:30) days start at 18:30 UTC',
    limit: calendar(1, 'day', 'Asia/Kolkata'),
    steps: [
      { at: utc('2026-06-01T18:29:00Z'), cost: 1, expect: { allowed: true, resetMs: 60_000 } },
      { at: utc('2026-06-01T18:30:00Z'), cost: 1, expect: { allowed: true, resetMs: 24 * HOUR } },
    ],
  },
];

/** Runs a scenario of the shared table through the pure functions, carrying the state of admitted steps. */
export function runWindowScenario(scenario: WindowScenario): void {
  let state: WindowState | undefined;
  for (const [index, step] of scenario.steps.entries()) {
    const outcome = consume(scenario.limit, state, step.at, step.cost);
    const got: Record<string, unknown> = { step: index };
    for (const field of Object.keys(step.expect))
      got[field] = outcome.decision[field as keyof typeof outcome.decision];
    expect(got).toEqual({ step: index, ...step.expect });
    if (outcome.decision.allowed) state = outcome.state;
  }
}

function consume(limit: WindowLimit, state: WindowState | undefined, now: number, cost: number) {
  return limit.algorithm === 'fixed-window'
    ? fixedWindowConsume(state, now, limit, cost)
    : slidingWindowConsume(state, now, limit, cost);
}
