import { TOKEN_EPSILON } from '../../lib/algorithms/token-epsilon.js';

/**
 * How big a lease a key gets, and how long a hot key waits between Redis
 * calls: pure functions of its demand, its contention and the bucket's shape
 * (no state, no clock), used by the {@link LeaseBook}. Times in
 * milliseconds, quantities in tokens.
 *
 * @internal
 */

/** A lease is sized to cover half a `leaseTtlMs` of demand, so it is usually spent before it expires. */
export const LEASE_DEMAND_SHARE = 0.5;
/**
 * From this lease size on, a key is hot: after Redis denies it, or leases it
 * fewer tokens than wanted, the next call waits until a whole lease can be
 * taken (see `TwoTierStore`). Below it, the wait would save nothing.
 */
export const HOT_LEASE = 4;
/** Tokens a key must have asked for (decayed) before it gets a lease: a key seen once or twice gets none. */
export const MIN_DEMAND = 2;
/** Shortest window over which a young key's demand is measured, as a share of `leaseTtlMs`. */
export const MIN_DEMAND_AGE = 0.1;
/**
 * Longest hold, as a share of the burst: a bucket that nobody drains while
 * every instance holds would refill this much, so never enough to overflow
 * and waste tokens.
 */
export const MAX_HOLD_SHARE = 0.5;
/** Largest contention (how many instances seem to drain one bucket). */
export const MAX_CONTENTION = 16;
/** Factor applied to the contention after a whole lease. */
export const CONTENTION_DECAY = 0.75;

/**
 * Extra tokens worth leasing with the next Redis call, from the key's
 * decayed demand (tokens asked, decayed with time constant `windowMs`): that
 * count over the window, or over the key's age while it is younger (a key
 * that just turned hot is hot now, not in a second), never over less than
 * {@link MIN_DEMAND_AGE} of it; half of it ({@link LEASE_DEMAND_SHARE}),
 * none below {@link MIN_DEMAND}, at most `floor(maxLeaseShare x burst)`.
 * A key a fleet shares asks for more of its demand (`FLEET_DEMAND_SHARE`,
 * `fleet-share.ts`): `demandShare`.
 */
export function leaseTarget(
  demand: number,
  ageMs: number,
  windowMs: number,
  maxLeaseShare: number,
  burst: number,
  demandShare = LEASE_DEMAND_SHARE,
): number {
  const cap = leaseCap(maxLeaseShare, burst);
  const measuredOverMs = Math.max(MIN_DEMAND_AGE * windowMs, Math.min(windowMs, ageMs));
  const perWindow = demand >= MIN_DEMAND ? (demand * windowMs) / measuredOverMs : 0;
  return Math.max(0, Math.min(cap, Math.floor(perWindow * demandShare)));
}

/** Largest lease: `floor(maxLeaseShare x burst)` whole tokens. */
export function leaseCap(maxLeaseShare: number, burst: number): number {
  return Math.floor(maxLeaseShare * burst + TOKEN_EPSILON);
}

/** True for a key whose lease target makes it hot ({@link HOT_LEASE}). */
export function isHot(target: number): boolean {
  return target >= HOT_LEASE;
}

/** True when Redis granted a hot key fewer extra tokens than it wanted: the bucket ran dry. */
export function cameShort(target: number, extra: number, cost: number, burst: number): boolean {
  return target >= HOT_LEASE && extra < Math.min(target, burst - cost);
}

/**
 * Tokens a hot key waits for, after a shortfall, before its next Redis
 * call: the request and a whole lease, times the contention seen (other
 * instances draining the same bucket), never more than half the burst
 * ({@link MAX_HOLD_SHARE}) unless the request and its lease alone are more,
 * so that the bucket cannot fill up and waste tokens meanwhile.
 */
export function holdTokens(
  target: number,
  contention: number,
  cost: number,
  burst: number,
): number {
  const batch = cost + Math.min(target, burst - cost);
  return Math.min(batch * contention, Math.max(batch, burst * MAX_HOLD_SHARE));
}

/** Contention after a call that came back short: doubled, at most {@link MAX_CONTENTION}. */
export function contended(contention: number): number {
  return Math.min(MAX_CONTENTION, contention * 2);
}

/** Contention after a whole lease: decayed ({@link CONTENTION_DECAY}), at least 1. */
export function relaxed(contention: number): number {
  return Math.max(1, contention * CONTENTION_DECAY);
}
