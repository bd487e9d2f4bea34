import type { RateLimitDecision } from '../../lib/algorithms/gcra.js';

/**
 * One request against the scenario's bucket: at time `at` (ms), take `cost`
 * tokens, and expect (a subset of) this decision. Every number is exact: the
 * runner compares with `Object.is`, so an expectation that needs a tolerance
 * does not belong here (those fields are simply left out of `expect`).
 */
export interface GcraStep {
  readonly at: number;
  readonly cost: number;
  readonly expect: Partial<RateLimitDecision>;
}

/**
 * A bucket and the requests made against it, in order. Runners start from an
 * absent key (`undefined` state) and carry the state returned by each step into
 * the next one, exactly as a store would between two requests.
 */
export interface GcraScenario {
  readonly name: string;
  readonly limit: { readonly rate: number; readonly burst: number };
  readonly steps: readonly GcraStep[];
}

/*
 * The shared scenario table for the GCRA token bucket: the TypeScript
 * implementation (`lib/algorithms/gcra.spec.ts`) and the Redis Lua script run
 * it. Every expectation was derived by hand from the token-bucket definition,
 * not from running the code:
 *
 *   interval I = 1000 / rate (ms per token), capacity C = burst * I (ms)
 *   tokens available at t  = burst - max(0, tat - t) / I, never below 0
 *   admitted iff tokens >= cost; then tat' = max(tat, t) + cost * I
 *   remaining  = floor(tokens left after the decision)
 *   resetMs    = time until the bucket is full = max(0, tat' - t)
 *   retryAfterMs (denied) = (cost - tokens) * I; Infinity when cost > burst
 *
 * Conventions for other runners:
 * - `retryAfterMs: Infinity` only appears with reason 'cost-exceeds-burst'
 *   (the Lua side can map its own sentinel to it).
 * - A denial leaves the state as it was. No scenario depends on what a runner
 *   carries after a denial of a never-seen key (the TS function returns `now`,
 *   a store keeps nothing: both mean "full").
 * - Steps with a time that is not an integer only appear where the value is an
 *   exact binary fraction (0.25, 0.5, 0.75, ...).
 */

/** Time near the top of the exactly representable range, leaving room for C. */
const NEAR_MAX = Number.MAX_SAFE_INTEGER - 10_000; // 9_007_199_254_730_991: every integer up to 2^53 is exact

/** 1000 single-token requests at one instant against a 1e6/s bucket of 1000. */
const highRateSingles: GcraStep[] = Array.from({ length: 1000 }, (_, i) => ({
  at: 0,
  cost: 1,
  // After the (i+1)-th token, 1000 - (i+1) whole tokens are left.
  expect: { allowed: true, remaining: 999 - i, retryAfterMs: 0 },
}));

export const gcraScenarios: readonly GcraScenario[] = [
  {
    // rate 1/s, burst 3: I = 1000, C = 3000. Three tokens at t=0, then empty.
    // At 999 the bucket holds 0.999 tokens: denied, 1 ms short. At 1000 one
    // whole token has come back: admitted, and empty again (tat = 4000).
    name: 'burst then deny with exact retryAfterMs',
    limit: { rate: 1, burst: 3 },
    steps: [
      { at: 0, cost: 1, expect: { allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1000 } },
      { at: 0, cost: 1, expect: { allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 2000 } },
      { at: 0, cost: 1, expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 3000 } },
      {
        at: 0,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1000,
          resetMs: 3000,
        },
      },
      {
        at: 999,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 1, resetMs: 2001 },
      },
      {
        at: 1000,
        cost: 1,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 3000 },
      },
      {
        at: 1000,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1000,
          resetMs: 3000,
        },
      },
    ],
  },
  {
    // rate 10/s, burst 5: I = 100, C = 500. Drain at 0 (tat 500). At 250,
    // 2.5 tokens: take 1 (1.5 left -> remaining 1, tat 600, reset 350); 2 more
    // is 0.5 short -> retry 50. At 300, 2 tokens: take both (tat 800). At
    // 1000 the bucket is full (tat 800 < 1000): 5 tokens, not more, however
    // long the idle time. Same after a 9 s idle.
    name: 'refill: partial, then full and capped at burst',
    limit: { rate: 10, burst: 5 },
    steps: [
      { at: 0, cost: 5, expect: { allowed: true, remaining: 0, resetMs: 500 } },
      { at: 250, cost: 1, expect: { allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 350 } },
      {
        at: 250,
        cost: 2,
        expect: { allowed: false, reason: 'limit', remaining: 1, retryAfterMs: 50, resetMs: 350 },
      },
      { at: 300, cost: 2, expect: { allowed: true, remaining: 0, resetMs: 500 } },
      { at: 1000, cost: 1, expect: { allowed: true, remaining: 4, resetMs: 100 } },
      { at: 10_000, cost: 5, expect: { allowed: true, remaining: 0, resetMs: 500 } },
      {
        at: 10_000,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 100, resetMs: 500 },
      },
    ],
  },
  {
    // '1/h': rate 1/3600, I = 3_600_000 (1000 / (1/3600) is exactly 3.6e6 in
    // doubles), burst 2, C = 7_200_000. Drain at 0. At 30 min, 0.5 token:
    // denied, 1_800_000 short, reset 5_400_000. At 1 h, one token: admitted.
    name: "fractional rate '1/h'",
    limit: { rate: 1 / 3600, burst: 2 },
    steps: [
      { at: 0, cost: 2, expect: { allowed: true, remaining: 0, resetMs: 7_200_000 } },
      {
        at: 0,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 3_600_000,
          resetMs: 7_200_000,
        },
      },
      {
        at: 1_800_000,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1_800_000,
          resetMs: 5_400_000,
        },
      },
      {
        at: 3_599_999,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1,
          resetMs: 3_600_001,
        },
      },
      {
        at: 3_600_000,
        cost: 1,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 7_200_000 },
      },
      { at: 14_400_000, cost: 1, expect: { allowed: true, remaining: 1, resetMs: 3_600_000 } },
    ],
  },
  {
    // rate 3/s: I = 1000/3 is a repeating binary fraction. burst 3, C = 1000.
    // Single tokens at 0 leave 2, 1, 0 (never 1, 0, 0 from 1.9999...). The
    // fourth is denied. At 333 the bucket holds 0.999 token (denied), at 334
    // 1.002 (admitted, 0 left). At 1334 it is full again (tat ~1333.33): one
    // token leaves exactly 2, two more leave 0 and the bucket is admitted to
    // its exact edge. At 5000, cost 3 is 3 * I = 1000 ms: reset exactly 1000.
    // (retryAfterMs / resetMs values that are not multiples of I's double are
    // left out: they are only equal up to a rounding step.)
    name: 'fractional rate 3/s: remaining stays exact',
    limit: { rate: 3, burst: 3 },
    steps: [
      {
        at: 0,
        cost: 1,
        expect: { allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1000 / 3 },
      },
      {
        at: 0,
        cost: 1,
        expect: { allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 2000 / 3 },
      },
      { at: 0, cost: 1, expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1000 } },
      { at: 0, cost: 1, expect: { allowed: false, reason: 'limit', remaining: 0, resetMs: 1000 } },
      { at: 333, cost: 1, expect: { allowed: false, reason: 'limit', remaining: 0 } },
      { at: 334, cost: 1, expect: { allowed: true, remaining: 0, retryAfterMs: 0 } },
      { at: 1334, cost: 1, expect: { allowed: true, remaining: 2, retryAfterMs: 0 } },
      { at: 1334, cost: 2, expect: { allowed: true, remaining: 0, retryAfterMs: 0 } },
      { at: 1334, cost: 1, expect: { allowed: false, reason: 'limit', remaining: 0 } },
      {
        at: 5000,
        cost: 3,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1000 },
      },
    ],
  },
  {
    // '100/15min': rate 100/900, I = 9000 (exact in doubles), burst 100,
    // C = 900_000. Drain at 0; one token is back after 9 s, not 1 ms earlier
    // (taking it: tat 909_000). At 90 s, 100 - (909_000 - 90_000) / 9000 = 9
    // tokens: cost 10 is one token (9000 ms) short, cost 9 empties it.
    name: "fractional rate '100/15min'",
    limit: { rate: 100 / 900, burst: 100 },
    steps: [
      { at: 0, cost: 100, expect: { allowed: true, remaining: 0, resetMs: 900_000 } },
      {
        at: 8999,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1,
          resetMs: 891_001,
        },
      },
      { at: 9000, cost: 1, expect: { allowed: true, remaining: 0, resetMs: 900_000 } },
      {
        at: 90_000,
        cost: 10,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 9,
          retryAfterMs: 9000,
          resetMs: 819_000,
        },
      },
      {
        at: 90_000,
        cost: 9,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 900_000 },
      },
    ],
  },
  {
    // rate 2/s, burst 10: I = 500, C = 5000. Cost 4 then 6 drains it (reset
    // 2000, then 5000). Cost 1 is 500 ms short. At 1000, 2 tokens: cost 3 is
    // one token (500 ms) short and charges nothing; cost 2 is admitted to the
    // edge. At 1500, 1 token: cost 2 is 500 ms short.
    name: 'cost > 1',
    limit: { rate: 2, burst: 10 },
    steps: [
      { at: 0, cost: 4, expect: { allowed: true, remaining: 6, retryAfterMs: 0, resetMs: 2000 } },
      { at: 0, cost: 6, expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 5000 } },
      {
        at: 0,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 500, resetMs: 5000 },
      },
      {
        at: 1000,
        cost: 3,
        expect: { allowed: false, reason: 'limit', remaining: 2, retryAfterMs: 500, resetMs: 4000 },
      },
      {
        at: 1000,
        cost: 2,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 5000 },
      },
      {
        at: 1500,
        cost: 2,
        expect: { allowed: false, reason: 'limit', remaining: 1, retryAfterMs: 500, resetMs: 4500 },
      },
    ],
  },
  {
    // rate 1/s, burst 2: I = 1000, C = 2000. Fractional costs: 0.5 leaves 1.5
    // (remaining 1, reset 500); 1.5 more empties it (reset 2000); 0.5 more is
    // 500 ms short. At 250, 0.25 token: still short by 250 ms.
    name: 'fractional cost',
    limit: { rate: 1, burst: 2 },
    steps: [
      { at: 0, cost: 0.5, expect: { allowed: true, remaining: 1, resetMs: 500 } },
      { at: 0, cost: 1.5, expect: { allowed: true, remaining: 0, resetMs: 2000 } },
      {
        at: 0,
        cost: 0.5,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 500, resetMs: 2000 },
      },
      {
        at: 250,
        cost: 0.5,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 250, resetMs: 1750 },
      },
      { at: 500, cost: 0.5, expect: { allowed: true, remaining: 0, resetMs: 2000 } },
    ],
  },
  {
    // rate 1/s, burst 5: I = 1000, C = 5000. cost == burst is admitted on a
    // full bucket only; on an empty one it is a plain 'limit' denial, 5000 ms
    // short. At 4999 the bucket holds 4.999 tokens: 1 ms short, remaining 4.
    name: 'cost == burst',
    limit: { rate: 1, burst: 5 },
    steps: [
      { at: 0, cost: 5, expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 5000 } },
      {
        at: 0,
        cost: 5,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 5000,
          resetMs: 5000,
        },
      },
      {
        at: 4999,
        cost: 5,
        expect: { allowed: false, reason: 'limit', remaining: 4, retryAfterMs: 1, resetMs: 1 },
      },
      {
        at: 5000,
        cost: 5,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 5000 },
      },
    ],
  },
  {
    // rate 1/s, burst 5. cost 6 can never be admitted: denied with
    // 'cost-exceeds-burst' and retryAfterMs Infinity, even on a full bucket
    // (remaining 5, reset 0), and it charges nothing: cost 5 right after is
    // admitted. On the now empty bucket, cost 6 and 5.5 still report the
    // bucket as it is (remaining 0, reset 5000); it stays untouched, so at 5000
    // the bucket is full again.
    name: 'cost > burst: always denied, never charged',
    limit: { rate: 1, burst: 5 },
    steps: [
      {
        at: 0,
        cost: 6,
        expect: {
          allowed: false,
          reason: 'cost-exceeds-burst',
          remaining: 5,
          retryAfterMs: Infinity,
          resetMs: 0,
        },
      },
      { at: 0, cost: 5, expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 5000 } },
      {
        at: 0,
        cost: 6,
        expect: {
          allowed: false,
          reason: 'cost-exceeds-burst',
          remaining: 0,
          retryAfterMs: Infinity,
          resetMs: 5000,
        },
      },
      {
        at: 1000,
        cost: 5.5,
        expect: {
          allowed: false,
          reason: 'cost-exceeds-burst',
          remaining: 1,
          retryAfterMs: Infinity,
          resetMs: 4000,
        },
      },
      { at: 5000, cost: 5, expect: { allowed: true, remaining: 0, resetMs: 5000 } },
      {
        at: 1_000_000,
        cost: 1000,
        expect: {
          allowed: false,
          reason: 'cost-exceeds-burst',
          remaining: 5,
          retryAfterMs: Infinity,
          resetMs: 0,
        },
      },
    ],
  },
  {
    // rate 1/s, burst 1: I = C = 1000. After the token at 0, every request in
    // [0, 1000) is denied and repeated denials at the same instant get the
    // same answer: a denial does not push the bucket further out.
    name: 'a denied request does not consume',
    limit: { rate: 1, burst: 1 },
    steps: [
      { at: 0, cost: 1, expect: { allowed: true, remaining: 0, resetMs: 1000 } },
      {
        at: 500,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 500, resetMs: 500 },
      },
      {
        at: 500,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 500, resetMs: 500 },
      },
      {
        at: 500,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 500, resetMs: 500 },
      },
      {
        at: 999,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 1, resetMs: 1 },
      },
      {
        at: 1000,
        cost: 1,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1000 },
      },
    ],
  },
  {
    // rate 4/s, burst 8: I = 250, C = 2000. resetMs is the time until the
    // bucket is full: 3 tokens -> 750. At 100, 2 more from a bucket due full
    // at 750 -> full at 1250 (reset 1150, 850 ms of room = 3.4 -> remaining 3).
    // At 1249 one more: full at 1500 (reset 251, room 1749 ms -> 6). Drain at
    // 5000: full at exactly 7000, so cost 8 is admitted at 7000 and is 1 ms
    // short at 8999 after the next drain.
    name: 'resetMs is exactly the time until full',
    limit: { rate: 4, burst: 8 },
    steps: [
      { at: 0, cost: 3, expect: { allowed: true, remaining: 5, resetMs: 750 } },
      { at: 100, cost: 2, expect: { allowed: true, remaining: 3, resetMs: 1150 } },
      { at: 1249, cost: 1, expect: { allowed: true, remaining: 6, resetMs: 251 } },
      { at: 5000, cost: 8, expect: { allowed: true, remaining: 0, resetMs: 2000 } },
      { at: 7000, cost: 8, expect: { allowed: true, remaining: 0, resetMs: 2000 } },
      {
        at: 8999,
        cost: 8,
        expect: { allowed: false, reason: 'limit', remaining: 7, retryAfterMs: 1, resetMs: 1 },
      },
    ],
  },
  {
    // rate 1/s, burst 3: I = 1000, C = 3000. At 10_000 take 1 (tat 11_000).
    // Clock back to 9000: the consumption now looks 2 s "in the future", so
    // the bucket holds 1 token (not 2, not 3): take it (tat 12_000, reset
    // 3000 = full). Back to 5000 and 0: the bucket is empty (remaining 0,
    // never negative), whatever the cost. Forward to 10_000: 1 token
    // (tat 12_000), as if the excursion had not happened. At 13_000 full
    // again: 2 left after 1. Over the whole run, 3 tokens were admitted
    // around t = 10_000: the burst, no more.
    // (retryAfterMs / resetMs of the denials at 5000 and 0 are the subject of
    // the next scenario.)
    name: 'clock going backwards: clamped, never refills',
    limit: { rate: 1, burst: 3 },
    steps: [
      { at: 10_000, cost: 1, expect: { allowed: true, remaining: 2, resetMs: 1000 } },
      {
        at: 9000,
        cost: 1,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 3000 },
      },
      { at: 5000, cost: 1, expect: { allowed: false, reason: 'limit', remaining: 0 } },
      { at: 0, cost: 1, expect: { allowed: false, reason: 'limit', remaining: 0 } },
      { at: 0, cost: 3, expect: { allowed: false, reason: 'limit', remaining: 0 } },
      {
        at: 10_000,
        cost: 1,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 3000 },
      },
      {
        at: 10_000,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1000,
          resetMs: 3000,
        },
      },
      { at: 13_000, cost: 1, expect: { allowed: true, remaining: 2, resetMs: 1000 } },
    ],
  },
  {
    // rate 1/s, burst 3: I = 1000, C = 3000. Drain at 10_000 (tat 13_000).
    // With the clock back at 5000, a request of cost 1 is admitted once
    // tat + I - t <= C, i.e. at t = 11_000: retryAfterMs must be 6000 (the
    // Retry-After contract: never earlier than the moment the request can
    // succeed). Cost 3 at 0 succeeds at t = 13_000: 13_000. 1 ms before
    // 11_000 it is still denied (retry 1), at 11_000 it is admitted.
    name: 'clock going backwards: retryAfterMs is when the request can succeed',
    limit: { rate: 1, burst: 3 },
    steps: [
      { at: 10_000, cost: 3, expect: { allowed: true, remaining: 0, resetMs: 3000 } },
      {
        at: 5000,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 6000 },
      },
      {
        at: 0,
        cost: 3,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 13_000 },
      },
      {
        at: 10_999,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 1 },
      },
      {
        at: 11_000,
        cost: 1,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 3000 },
      },
    ],
  },
  {
    // rate 1/s, burst 2 (I = 1000, C = 2000) at N = MAX_SAFE_INTEGER - 10_000:
    // every time and TAT below is an integer < 2^53, so exact. Drain at N
    // (tat N + 2000). Denied at N: 1000 short. At N + 995: 5 ms short (the
    // implementation's rounding slack at this magnitude is ~4 ms, so this
    // step stays clear of it). At N + 1000 one token: admitted. At N + 7000
    // (tat N + 3000 is in the past) the bucket is full.
    name: 'times near Number.MAX_SAFE_INTEGER',
    limit: { rate: 1, burst: 2 },
    steps: [
      { at: NEAR_MAX, cost: 1, expect: { allowed: true, remaining: 1, resetMs: 1000 } },
      { at: NEAR_MAX, cost: 1, expect: { allowed: true, remaining: 0, resetMs: 2000 } },
      {
        at: NEAR_MAX,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 1000,
          resetMs: 2000,
        },
      },
      {
        at: NEAR_MAX + 995,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 5, resetMs: 1005 },
      },
      {
        at: NEAR_MAX + 1000,
        cost: 1,
        expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 2000 },
      },
      { at: NEAR_MAX + 7000, cost: 2, expect: { allowed: true, remaining: 0, resetMs: 2000 } },
      { at: NEAR_MAX + 9000, cost: 1, expect: { allowed: true, remaining: 1, resetMs: 1000 } },
    ],
  },
  {
    // rate 1e6/s, burst 1000: I = 0.001, C = 1000 * 0.001 = 1 (exact in
    // doubles). Drain at 0 (tat 1). Cost 500 is 0.5 ms short (1 + 0.5 exact).
    // At 0.25 the bucket holds 250 tokens: cost 250 is admitted to the edge
    // (250 * 0.001 rounds to exactly 0.25; tat 1.25, reset 1). At 0.75, 500
    // tokens: take 250, 250 left (tat 1.5, reset 0.75). At 2 full again.
    // At 2.5, 500 tokens: take 1 -> 499 whole tokens left.
    name: 'very high rate 1e6/s',
    limit: { rate: 1e6, burst: 1000 },
    steps: [
      { at: 0, cost: 1000, expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1 } },
      {
        at: 0,
        cost: 500,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 0.5, resetMs: 1 },
      },
      { at: 0.25, cost: 251, expect: { allowed: false, reason: 'limit', remaining: 250 } },
      { at: 0.25, cost: 250, expect: { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1 } },
      { at: 0.75, cost: 250, expect: { allowed: true, remaining: 250, resetMs: 0.75 } },
      { at: 2, cost: 1000, expect: { allowed: true, remaining: 0, resetMs: 1 } },
      { at: 2.5, cost: 1, expect: { allowed: true, remaining: 499, retryAfterMs: 0 } },
    ],
  },
  {
    // Same bucket, 1000 single tokens at one instant: exactly 1000 admitted
    // with remaining counting down 999..0 (1000 additions of 0.001 must not
    // lose or gain a token), the 1001st denied.
    name: 'very high rate 1e6/s: exactly burst single tokens at one instant',
    limit: { rate: 1e6, burst: 1000 },
    steps: [
      ...highRateSingles,
      { at: 0, cost: 1, expect: { allowed: false, reason: 'limit', remaining: 0 } },
    ],
  },
  {
    // '1/day': rate 1/86400, I = C = 86_400_000 (exact). One token per day.
    name: "very low rate '1/day'",
    limit: { rate: 1 / 86_400, burst: 1 },
    steps: [
      { at: 0, cost: 1, expect: { allowed: true, remaining: 0, resetMs: 86_400_000 } },
      {
        at: 43_200_000,
        cost: 1,
        expect: {
          allowed: false,
          reason: 'limit',
          remaining: 0,
          retryAfterMs: 43_200_000,
          resetMs: 43_200_000,
        },
      },
      {
        at: 86_399_999,
        cost: 1,
        expect: { allowed: false, reason: 'limit', remaining: 0, retryAfterMs: 1, resetMs: 1 },
      },
      { at: 86_400_000, cost: 1, expect: { allowed: true, remaining: 0, resetMs: 86_400_000 } },
    ],
  },
];
