/**
 * Fleet-scale pacing of a hot key (issue 29): pure functions of the lease
 * size, the instances Redis counted for the bucket (`scripts/fleet.lua.ts`)
 * and a uniform draw, used by the {@link LeaseBook}. No state, no clock, no
 * I/O. Times in milliseconds, quantities in tokens.
 *
 * Why. A saturated bucket refills at `rate`; `n` instances draining it each
 * want a whole batch (`cost + lease`) per Redis call. If each waits, after a
 * call that came back short or denied, until the bucket has refilled one
 * batch for every instance taking part (`n x batch` tokens), the fleet's
 * calls on the key add up to `rate / batch` per second, whatever `n`:
 * central calls per admitted request stay about `1 / batch`, flat in `n`
 * (the learned contention this replaces was capped at 16, and its hold at
 * half a burst: beyond a few instances each call fetched a token or two).
 *
 * The wait is drawn uniformly in `[0, 2) x` its mean (`draw` in `[0, 1)`):
 * instances that came back short together (all of them, at start) then call
 * again spread over the period, one every `batch / rate` on average, so that
 * the bucket neither sits full (tokens wasted: under-admission) nor is
 * fought over by a burst of calls. A single instance waits exactly its mean.
 *
 * Never over: pacing only decides when an instance asks; every token it
 * spends was taken from the Redis bucket atomically first.
 *
 * @internal
 */

/**
 * Share of a `leaseTtlMs` of its demand that a key Redis counted several
 * instances for asks per lease (a key of one instance asks
 * `LEASE_DEMAND_SHARE`, half): its calls are paced by the fleet, so each
 * should bring a bigger batch, still spent well before the lease expires.
 */
export const FLEET_DEMAND_SHARE = 0.75;

/**
 * Mean hold of a fleet, as a share of the time the bucket takes to refill
 * one batch for every instance. Under 1 so that the fleet can drain the
 * bucket faster than it refills: with random gaps between calls, a bucket
 * drained on average exactly as fast as it refills sits full at times and
 * wastes tokens (4 processes, burst 200: 88 % of the bound admitted with 1,
 * `test/two-tier/multi-process.e2e-spec.ts`). A call then finds about this
 * share of a batch: central calls per admitted request about
 * `1 / (FLEET_HOLD_SHARE x batch)`. 0.75 rather than 0.5: a third fewer
 * calls at the same admitted share (`FLEET_N=2,8,32
 * FLEET_SCENARIOS=uniform,skewed,bursty node bench/fleet/run.mjs`: 97.5 %
 * of the bound at N = 8 uniform, 0.064 calls per admitted after the first
 * second).
 */
export const FLEET_HOLD_SHARE = 0.75;

/**
 * Extra tokens an instance asks to join with (`joinExtra`) when its own
 * demand does not make the key hot yet: granted only if other instances
 * already lease the bucket (`scripts/fleet.lua.ts`), so that a key hot
 * across the fleet is leased from an instance's first call (warm-up about
 * one call per instance), and a cold or per-user key gets nothing. Small:
 * an instance that sees little of the key's traffic holds it unspent until
 * it expires (at most `N x FLEET_JOIN_LEASE` tokens across the fleet).
 */
export const FLEET_JOIN_LEASE = 8;

/**
 * How long after its last answer an instance tells Redis the bucket's
 * epoch, as a share of `leaseTtlMs`: under the shortest life of the fleet
 * set (`2 x leaseTtlMs`, {@link fleetWindowMs}), so that a set that expired
 * from silence is never taken for a lost one.
 */
export const EPOCH_MEMORY_SHARE = 1.5;

/** The join of a key (see {@link FLEET_JOIN_LEASE}): at most the largest lease, and the burst after the cost. */
export function joinLease(leaseCap: number, cost: number, burst: number): number {
  return Math.max(0, Math.min(FLEET_JOIN_LEASE, leaseCap, Math.floor(burst - cost)));
}

/** Longest window an instance counts for after its last lease call (ms): bounds the fleet set's life. */
export const MAX_FLEET_WINDOW_MS = 60_000;

/**
 * Tokens a hot key waits for after a short or denied lease call: a whole
 * batch (`cost + lease`, at most the burst) for each of the `instances`
 * taking part, times {@link FLEET_HOLD_SHARE} and the jitter `2 x draw`
 * when there are several (mean 1).
 */
export function fleetHoldTokens(
  lease: number,
  instances: number,
  cost: number,
  burst: number,
  draw: number,
): number {
  const batch = cost + Math.max(0, Math.min(lease, burst - cost));
  const n = Math.max(1, instances);
  return n === 1 ? batch : batch * n * FLEET_HOLD_SHARE * 2 * clampDraw(draw);
}

/**
 * How long an instance keeps counting in the fleet set after its last lease
 * call: twice the mean hold it paces by (so that the instances waiting out a
 * hold are still counted when the others ask), at least twice `leaseTtlMs`
 * (a key leased without holds calls at least that often), at most
 * {@link MAX_FLEET_WINDOW_MS}.
 */
export function fleetWindowMs(
  lease: number,
  instances: number,
  cost: number,
  intervalMs: number,
  leaseTtlMs: number,
): number {
  const meanHoldMs = (cost + lease) * Math.max(1, instances) * intervalMs * FLEET_HOLD_SHARE;
  return Math.min(MAX_FLEET_WINDOW_MS, Math.max(2 * leaseTtlMs, 2 * meanHoldMs));
}

/**
 * Central calls per admitted request on a saturated hot key, at steady
 * state: one call per {@link FLEET_HOLD_SHARE} of a batch, whatever the number of instances (the bound
 * `docs/fleet.md` publishes).
 */
export function callsPerAdmitted(lease: number, cost: number): number {
  return 1 / (FLEET_HOLD_SHARE * (cost + lease));
}

function clampDraw(draw: number): number {
  return Number.isFinite(draw) ? Math.min(Math.max(draw, 0), 1 - Number.EPSILON) : 0.5;
}
