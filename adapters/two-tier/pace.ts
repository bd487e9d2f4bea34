/**
 * Paces (issue 29): a hot key's share of the rate, held for a while. Pure
 * functions of a pace's rate (tokens per second), the moment its tokens
 * start coming due (`from`), the moment it ends (`until`) and the store
 * clock's `at`, all in milliseconds. No state, no I/O.
 *
 * Why. A lease of tokens is charged to the Redis bucket when granted and
 * spent at the instance's demand: tokens leased and not spent yet are
 * neither in the bucket nor admitted, and a fleet paced at `c` calls per
 * admitted request holds `r / (2 d c)` of them (`docs/fleet.md`). A pace is
 * charged to the bucket in advance too (`scripts/pace.lua.ts`: into its
 * future refill, which the bucket lends because the live paces add up to
 * its rate at most), but its tokens come due at the pace's rate: an
 * instance whose demand exceeds its share spends each token as it comes due
 * and holds none. Calls: one per pace, whatever the traffic.
 *
 * Never over: a token is spent only once due, and the paces due at any
 * moment add up to the bucket's rate at most, so that with the bucket's own
 * admissions the fleet stays within `burst + rate x interval`.
 *
 * @internal
 */
import type { PaceAsk } from '../redis/lease.interface.js';
import type { KeyState } from './key-state.js';
import { emissionIntervalMs, type BucketLimit } from '../../lib/algorithms/gcra.js';

/**
 * Tokens a pace brings (at most the burst): it lasts as long as its share of
 * the rate takes to bring them, so that calls per admitted request stay
 * about `1 / PACE_TOKENS` whatever the number of instances sharing the rate.
 */
export const PACE_TOKENS = 64;

/**
 * Shortest pace, in `leaseTtlMs`: a hot key alone on its bucket calls no more
 * often, nor does the heavy instance of a skewed fleet (a share of 160/s brings
 * `PACE_TOKENS` in 400 ms).
 */
export const MIN_PACE_LEASE_TTLS = 1;

/** Shortest pace of a young key (within `leaseTtlMs` of its first request), and its longest while unsure, in `leaseTtlMs`. */
export const YOUNG_PACE_LEASE_TTLS = 0.25;

/**
 * How long the bucket's own tokens taken at once with a pace (its lump, and
 * any extras of the call) may wait to be spent, in `leaseTtlMs`; what is left
 * then goes back to Redis. Redis cannot tell them held from spent, and the
 * bucket refills beside them: a window may admit them on top of `burst +
 * rate x window`, at most what the bucket refills while they wait
 * (`rate x LUMP_LEASE_TTLS x leaseTtlMs`), not whatever a light instance
 * would hold for as long as it paces (`docs/fleet.md`, "The bounds").
 */
export const LUMP_LEASE_TTLS = 0.25;

/**
 * {@link LUMP_LEASE_TTLS} for a young key's lump (within `leaseTtlMs` of its
 * first request). Its lump is sized on its demand as read, over a gap or two
 * between requests, which overstates what the key is offered by up to 1.6
 * times (16 to 51/s read for 31.25/s in traced N = 32 uniform fleet bench
 * runs): spent at the demand offered, a lump sized on such a reading takes
 * that much longer. What lapsed of it was owed until the key's next pace
 * ask, ten seconds on at a share of 6.25/s, and lost to the fleet meanwhile.
 * The window bound's wait `X` is this long for such a lump
 * (`docs/fleet.md`, "The bounds").
 */
export const YOUNG_LUMP_LEASE_TTLS = 2 * LUMP_LEASE_TTLS;

/** Longest pace (ms): a share too small to bring its tokens sooner is asked again then. */
export const MAX_PACE_MS = 30_000;

/**
 * Tokens of a pace that come due while the instance does not spend them
 * wait, up to the pace's share of the burst (`pace x burst / rate`), no
 * more than the pace brings in `leaseTtlMs`, and no more than Redis lent
 * with the pace (`lentMs`, bucket time), though always a request's cost;
 * the rest are dropped. Across the fleet that is the burst at most, what the
 * bucket itself would save over the same pause. Redis keeps the bucket that
 * far below full while the paces live (`fleet_held` in
 * `scripts/pace.lua.ts`), so that savings and bucket together never hold
 * more than the burst; the lease-TTL bound keeps an ended pace's savings
 * (shrinking at its rate) shorter-lived than its member of the fleet set
 * (a window of at least twice `leaseTtlMs`), which is how Redis knows them.
 */
export function savingsCapMs(
  paceRate: number,
  cost: number,
  limit: BucketLimit,
  leaseTtlMs: number,
  lentMs = Number.POSITIVE_INFINITY,
): number {
  const interval = emissionIntervalMs(limit);
  const horizonS = Math.min(limit.burst / limit.rate, leaseTtlMs / 1000);
  return Math.max(cost * interval, Math.min(lentMs, Math.max(1, paceRate * horizonS) * interval));
}

/**
 * Milliseconds of a pace's `newlyDue` tokens (`intervalMs` each) that join
 * its savings, `savedMs` so far, up to the cap ({@link savingsCapMs}); the
 * rest are dropped. None when nothing new came due (a clock stepped back).
 */
export function savingsCreditMs(
  newlyDue: number,
  intervalMs: number,
  savedMs: number,
  capMs: number,
): number {
  return Math.max(0, Math.min(newlyDue * intervalMs, capMs - savedMs));
}

/**
 * Savings (ms) left of `savedMs` once an ended pace at `endedRate` has let
 * Redis' bucket regain its share of the refill for `elapsedMs`: a token for
 * each the bucket regains, so that savings and bucket together hold no more
 * than the savings did at the pace's end.
 */
export function savingsAfterShrinkMs(
  savedMs: number,
  endedRate: number,
  elapsedMs: number,
  intervalMs: number,
): number {
  return Math.max(0, savedMs - (endedRate * elapsedMs * intervalMs) / 1000);
}

/** Share of a pace's length before its end at which the next request renews it. */
export const PACE_RENEW_SHARE = 0.1;

/** Shortest age (ms) a key's demand is measured over: two requests a millisecond apart are not 1,000/s. */
export const MIN_DEMAND_AGE_MS = 20;

/**
 * Tokens per second a key's demand `score` stands for, `ageMs` after its
 * first request. The score decays with time constant `leaseTtlMs`
 * (`LeaseBook.observe`) and starts with the first request's cost (1 here):
 * a demand `d` since then adds up to `d x leaseTtlMs x (1 - e^(-age/leaseTtlMs))
 * / 1000` on top of what is left of that first one, `e^(-age/leaseTtlMs)`.
 * Read back, a young key's demand is its requests after the first over its
 * age (two requests 30 ms apart: 33/s, not 67), an older key's its score
 * over a lease TTL.
 */
export function demandPerSecond(score: number, ageMs: number, leaseTtlMs: number): number {
  const age = Math.max(ageMs, MIN_DEMAND_AGE_MS);
  const first = Math.exp(-age / leaseTtlMs);
  return (Math.max(0, score - first) * 1000) / (leaseTtlMs * (1 - first));
}

/**
 * What a call replacing the key's pace tells Redis of it (its rate and
 * length): what Redis takes back from what a lost state's paces are taken
 * to hold (`scripts/pace.lua.ts`).
 */
export function heldPace(state: KeyState): Pick<PaceAsk, 'held' | 'heldMs'> {
  return { held: state.paceRate, heldMs: state.paceUntil - state.paceFrom };
}

/**
 * True when a pace that ran from `from` to `until` is still told as held by
 * a call at `at`: its fleet set lives twice the pace's length from the
 * grant (`PEXPIRE`), so until half a length past the end a set found
 * missing means a lost state; later, it may have expired on its own, and
 * the pace holds nothing anyway.
 */
export function stillHeld(from: number, until: number, at: number): boolean {
  return at < until + (until - from) / 2;
}

/** Tokens of a pace due at `at` since `from` (none after `until`). */
export function dueTokens(rate: number, from: number, until: number, at: number): number {
  return (rate * Math.max(0, Math.min(at, until) - from)) / 1000;
}

/** True when a pace ending at `until` and lasting `grantMs` should be renewed at `at`. */
export function renewalDue(until: number, grantMs: number, at: number): boolean {
  return at >= until - PACE_RENEW_SHARE * grantMs;
}

/** Milliseconds until a pace at `rate` brings `missing` tokens more. */
export function waitForTokens(rate: number, missing: number): number {
  return rate > 0 ? (Math.max(0, missing) * 1000) / rate : Number.POSITIVE_INFINITY;
}
