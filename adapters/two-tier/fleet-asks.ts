import { emissionIntervalMs } from '../../lib/algorithms/gcra.js';
import type {
  TokenBucketCheck,
  TokenBucketLimit,
} from '../../lib/store/rate-limit-store.interface.js';
import type { LeaseCheck } from '../redis/index.js';
import { EPOCH_MEMORY_SHARE, fleetWindowMs } from './fleet-share.js';
import type { KeyState } from './key-state.js';
import { demandPerSecond } from './pace.js';

/**
 * The fleet's part of a lease call (issue 29, `scripts/fleet.lua.ts`): what
 * an instance tells Redis about a key (its lease target, a join, the epoch
 * it last saw, its demand weight) and what it keeps of the answer (the
 * epoch, the fleet's load). Functions of a key's {@link KeyState} and the
 * store clock's `clockNow`, used by the `LeaseBook`.
 *
 * @internal
 */

/**
 * What a lease call asks for `check`: its cost, its lease target on top,
 * its demand weight (demand per second over the rate: the decayed score
 * counts about one `leaseTtlMs` of demand), a `joinExtra` when the join is
 * more than the target, and the bucket's epoch while recent (within
 * `EPOCH_MEMORY_SHARE x leaseTtlMs` of its answer: the fleet set outlives
 * that unless the state was lost).
 */
export function leaseAsk(
  check: TokenBucketCheck,
  state: KeyState,
  joinExtra: number,
  clockNow: number,
  leaseTtlMs: number,
): LeaseCheck {
  const asking: LeaseCheck = {
    key: check.key,
    limit: check.limit,
    cost: check.cost,
    maxExtra: state.target,
    weight:
      demandPerSecond(state.score, state.seenAt - state.firstSeen, leaseTtlMs) / check.limit.rate,
  };
  const epoch =
    state.epoch !== '' && clockNow - state.epochAt < EPOCH_MEMORY_SHARE * leaseTtlMs
      ? state.epoch
      : undefined;
  if (joinExtra <= state.target && epoch === undefined) return asking;
  return {
    ...asking,
    ...(joinExtra > state.target ? { joinExtra } : {}),
    ...(epoch === undefined ? {} : { epoch }),
  };
}

/**
 * What a first sighting asks when instances share the buckets: each check
 * its cost and no lease, unless other instances lease its bucket already
 * (`joinOf(check)` tokens then); not counted in the fleet (a key seen once
 * leaves nothing in Redis but its bucket).
 */
export function firstSightingAsk(
  checks: readonly TokenBucketCheck[],
  joinOf: (check: TokenBucketCheck) => number,
): LeaseCheck[] {
  return checks.map((check) => ({
    key: check.key,
    limit: check.limit,
    cost: check.cost,
    maxExtra: 0,
    joinExtra: joinOf(check),
    joinCounts: false,
  }));
}

/**
 * What a fleet call answered for a bucket: its epoch (`''`: none),
 * remembered with `clockNow`, and the fleet's demand `load` over this
 * instance's `weight` (`KeyState.fleetLoad`, at least 1). When Redis counted
 * this instance alone, the load is its own: exactly 1. (Weights travel in a
 * score's fraction, to about 2^-13 near today's epoch milliseconds: decoded,
 * a lone instance's load can read up to about 0.1 % over 1 at 5x the rate,
 * and any load over 1 paces with the random hold meant for a fleet,
 * `fleetHoldTokens`.)
 */
export function rememberFleet(
  state: KeyState,
  clockNow: number,
  epoch = '',
  load = 0,
  weight = 0,
  instances = 0,
): void {
  if (load > 0 && weight > 0) state.fleetLoad = instances === 1 ? 1 : Math.max(1, load / weight);
  if (epoch === '') return;
  state.epoch = epoch;
  state.epochAt = clockNow;
}

/**
 * How many instances' worth of demand a key paces by: the fleet's demand
 * over its own when Redis summed it, else the instances counted (0: none).
 */
export function fleetSize(state: KeyState | undefined): number {
  return state === undefined ? 0 : state.fleetLoad || state.instances;
}

/**
 * The window of the fleet count asked with a lease call for `asked` (whose
 * keys' states are `states`): the longest its hot keys need
 * (`fleetWindowMs`); 0 when none asks a lease, a join, a pace or tells an
 * epoch (no count then: only instances taking part are counted).
 */
export function fleetCallWindowMs(
  asked: readonly LeaseCheck[],
  states: readonly (KeyState | undefined)[],
  leaseTtlMs: number,
): number {
  let windowMs = 0;
  asked.forEach((check, j) => {
    const lease = Math.max(check.maxExtra, check.joinExtra ?? 0);
    // A pace asked, renewed or given back counts too (and must not trim the others early).
    if (lease <= 0 && check.epoch === undefined && check.pace === undefined) return;
    const instances = fleetSize(states[j]);
    const intervalMs = emissionIntervalMs(check.limit as TokenBucketLimit);
    windowMs = Math.max(
      windowMs,
      fleetWindowMs(lease, instances, check.cost, intervalMs, leaseTtlMs),
    );
  });
  return windowMs;
}
