/**
 * Token bucket as GCRA (the generic cell rate algorithm).
 *
 * Why GCRA rather than "tokens + last refill timestamp": both describe exactly
 * the same bucket (rate `r` tokens/s, capacity `burst`), but GCRA keeps a single
 * number per key, the *theoretical arrival time* (TAT): the moment at which the
 * bucket will be full again. That buys three things the rest of the library
 * relies on:
 * - a key whose TAT is in the past is indistinguishable from a key never seen,
 *   so stores can delete it at any moment (memory sweep, a Redis expiry at the TAT)
 *   without changing any decision: cleanup is exact, not a guess;
 * - one number is one Redis string, written with one `SET ... PX`;
 * - the rate can change between two decisions (adaptive limits) without
 *   converting stored state: the TAT is re-read against the new rate.
 *
 * Everything here is pure: state, time and limit in, state and decision out.
 * The Redis Lua script (`adapters/redis`) implements the same arithmetic and is
 * checked against the same scenario table.
 *
 * Units: milliseconds for time, tokens for quantities, tokens per second for rates.
 */
import type { DenyReason, RateLimitDecision } from './rate-limit-decision.js';
import { TOKEN_EPSILON } from './token-epsilon.js';

export type { DenyReason, RateLimitDecision } from './rate-limit-decision.js';

/** Bucket shape as the algorithm needs it: already validated and normalised. */
export interface BucketLimit {
  /** Refill rate in tokens per second (> 0). */
  readonly rate: number;
  /** Bucket capacity in tokens (>= 1). */
  readonly burst: number;
}

/** Result of {@link gcraConsume}: the decision and the TAT to store (unchanged when denied). */
export interface GcraOutcome {
  readonly decision: RateLimitDecision;
  /** New theoretical arrival time (ms). Equal to the input state when nothing was consumed. */
  readonly tat: number;
}

/** Milliseconds between two tokens. */
export function emissionIntervalMs(limit: BucketLimit): number {
  return 1000 / limit.rate;
}

/**
 * Slack (ms) under which two instants are considered equal: a fraction of a
 * token, plus the rounding step of doubles at the magnitude of `now` (at
 * `Number.MAX_SAFE_INTEGER` milliseconds, doubles are 1-2 ms apart).
 */
function toleranceMs(now: number, intervalMs: number): number {
  return TOKEN_EPSILON * intervalMs + Math.abs(now) * Number.EPSILON * 2;
}

/**
 * Consume `cost` tokens at `now` from a bucket whose stored TAT is `tat`
 * (`undefined` for a key never seen, which is the same as a full bucket).
 *
 * Time running backwards never refills: a TAT in the past counts as "full
 * now", and a TAT further ahead than the bucket's capacity (a clock that went
 * backwards, or a burst that shrank) is an empty bucket that stays empty until
 * that TAT, so `retryAfterMs` and `resetMs` are measured from the stored TAT,
 * never from a clamped one: waiting `retryAfterMs` is always enough.
 */
export function gcraConsume(
  tat: number | undefined,
  now: number,
  limit: BucketLimit,
  cost: number,
): GcraOutcome {
  const interval = emissionIntervalMs(limit);
  const capacityMs = limit.burst * interval;
  const current = tat === undefined || tat < now ? now : tat;

  if (cost > limit.burst + TOKEN_EPSILON) {
    return {
      tat: tat ?? now,
      decision: denied(
        current,
        now,
        interval,
        capacityMs,
        Number.POSITIVE_INFINITY,
        'cost-exceeds-burst',
        toleranceMs(now, interval),
      ),
    };
  }

  const next = charge(current, cost * interval);
  const debtMs = next - now;
  const slack = toleranceMs(now, interval);
  if (debtMs <= capacityMs + slack) {
    return {
      tat: next,
      decision: {
        allowed: true,
        remaining: wholeTokens(capacityMs - debtMs, interval, slack),
        retryAfterMs: 0,
        resetMs: Math.min(capacityMs, Math.max(0, debtMs)),
      },
    };
  }
  return {
    tat: tat ?? now,
    decision: denied(current, now, interval, capacityMs, debtMs - capacityMs, 'limit', slack),
  };
}

/**
 * `from + stepMs`, rounded up so that the bucket is never charged less than
 * `stepMs`. At `Date.now()` magnitudes doubles are 2^-12 ms apart, coarser
 * than one token at very high rates (1e6/s is 0.001 ms per token); rounding to
 * nearest would under-charge and admit more than the burst. Rounding up can
 * only admit fewer, by at most one double step per decision.
 */
function charge(from: number, stepMs: number): number {
  let next = from + stepMs;
  while (next - from < stepMs) next = nextUp(next);
  return next;
}

/** One double's bits, viewed as two 32-bit halves (for {@link nextUp}). */
const bits = new Float64Array(1);
const halves = new Uint32Array(bits.buffer);
/** Index of the low half: typed arrays use the platform's byte order. */
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/**
 * The next double above `x` (finite `x`), by incrementing its bits: a few
 * nanoseconds, where `2 ** (Math.floor(Math.log2(x)) - 52)` cost a third of
 * a decision at high rates, whose charge rounds down about every other time.
 */
function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  bits[0] = x;
  if (x > 0) {
    // A larger magnitude: +1 on the 64-bit pattern, carrying into the high half.
    if (++halves[LOW]! === 0) halves[HIGH]!++;
  } else if (halves[LOW]!-- === 0) {
    // A smaller magnitude (towards zero): -1, borrowing from the high half.
    halves[HIGH]!--;
  }
  return bits[0]!;
}

/**
 * What the bucket looks like at `now` without consuming: the decision a
 * request of cost 0 would get (always allowed, never changes state).
 */
export function gcraPeek(
  tat: number | undefined,
  now: number,
  limit: BucketLimit,
): RateLimitDecision {
  return gcraConsume(tat, now, limit, 0).decision;
}

/**
 * The TAT of a bucket blocked for `durationMs` from `now` (a penalty): empty
 * until `now + durationMs`, when one token is back, then refilling at its
 * rate. Never earlier than the bucket already is (a block only extends), so
 * blocking twice is blocking once.
 */
export function gcraBlock(
  tat: number | undefined,
  now: number,
  limit: BucketLimit,
  durationMs: number,
): number {
  const interval = emissionIntervalMs(limit);
  const blocked = now + durationMs + (limit.burst - 1) * interval;
  const current = tat === undefined || tat < now ? now : tat;
  return Math.max(current, blocked);
}

/**
 * Milliseconds until the bucket holds one more whole token than
 * `decision.remaining`: the window within which the caller can spend no more
 * than what it has (draft-ietf-httpapi-ratelimit-headers-11's `t`). For a full
 * bucket (`resetMs` 0) that is one emission interval: a token spent now comes
 * back that long after, and none arrives before.
 */
export function nextTokenMs(decision: RateLimitDecision, limit: BucketLimit): number {
  const interval = emissionIntervalMs(limit);
  return Math.max(0, decision.resetMs - (limit.burst - decision.remaining - 1) * interval);
}

function denied(
  current: number,
  now: number,
  interval: number,
  capacityMs: number,
  retryAfterMs: number,
  reason: DenyReason,
  slack: number,
): RateLimitDecision {
  const debtMs = current - now;
  return {
    allowed: false,
    remaining: wholeTokens(capacityMs - debtMs, interval, slack),
    retryAfterMs,
    resetMs: Math.max(0, debtMs),
    reason,
  };
}

/** Whole tokens in `freeMs` of bucket room, forgiving rounding up to `slack` ms. */
function wholeTokens(freeMs: number, interval: number, slack: number): number {
  return Math.max(0, Math.floor((freeMs + slack) / interval));
}

/**
 * Give `tokens` back to a bucket whose stored TAT is `tat`: `TAT - tokens x
 * interval`, never below `now` (a bucket is never fuller than full, and
 * tokens it would have regained by now anyway are not added twice).
 *
 * @returns the TAT to store, or `undefined` when the bucket is full (the key can be deleted).
 */
export function gcraRefund(
  tat: number | undefined,
  now: number,
  limit: BucketLimit,
  tokens: number,
): number | undefined {
  if (tat === undefined) return undefined;
  const refunded = Math.max(now, tat - tokens * emissionIntervalMs(limit));
  return refunded > now ? refunded : undefined;
}

/**
 * Settle a reservation (`settle`, `RateLimiter.reserve`): apply the
 * difference between what was charged at admission and what was spent.
 * `delta < 0` gives tokens back exactly as {@link gcraRefund} does (never
 * fuller than full). `delta > 0` charges the rest even past empty: the TAT
 * moves beyond `now + burst x interval`, the bucket is in debt, and every
 * later request waits until the debt is repaid at the rate (`gcraConsume`
 * measures its wait from the stored TAT). The request that overspent was
 * admitted already and stays so.
 *
 * @returns the TAT to store, or `undefined` when the bucket is full (the key can be deleted).
 */
export function gcraSettle(
  tat: number | undefined,
  now: number,
  limit: BucketLimit,
  delta: number,
): number | undefined {
  if (delta < 0) return gcraRefund(tat, now, limit, -delta);
  const current = tat === undefined || tat < now ? now : tat;
  if (delta === 0) return current > now ? current : undefined;
  return charge(current, delta * emissionIntervalMs(limit));
}
