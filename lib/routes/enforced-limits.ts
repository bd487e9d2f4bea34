import { policyHeader } from '../headers/rate-limit-headers.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import { strictestFailMode } from '../limits/fail-mode.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import { reservingBucket } from '../policies/delay/reservation.js';
import { capacityOf, type StoreLimit } from '../store/rate-limit-store.interface.js';

/**
 * Everything a route derives from the rate limits it enforces. One function
 * ({@link enforcedLimits}) computes it, for the route compiled at start-up
 * and for each narrowing of it by `skip`, so the two can never disagree.
 *
 * @internal
 */
export interface EnforcedLimits {
  /** The limits that decide (shadow limits excepted), those keyed by user after the route's own guards last. */
  readonly limits: readonly ResolvedLimit[];
  /**
   * Index of the first limit evaluated after the route's own guards (limits
   * keyed by user on a route that authenticates with its own guards);
   * `limits.length` when every limit is evaluated at once.
   */
  readonly afterRouteGuards: number;
  /** The store bucket of each limit as declared (with `maxDelay`, the reserving bucket; adaptive limits move away from it). */
  readonly buckets: readonly StoreLimit[];
  /** The strictest fail mode of the limits (each limit's own, else the module's). */
  readonly failMode: FailMode;
  /** `limits`' names and capacities, in order: what the decision channel publishes, built once. */
  readonly limitNames: readonly string[];
  readonly limitBursts: readonly number[];
  /** Names of the adaptive limits, whose outcomes the interceptor reports. */
  readonly adaptiveNames: readonly string[];
  /** Some limit counts only failures or only successes: the interceptor may give tokens back. */
  readonly chargesByOutcome: boolean;
  /** The interceptor has work after the handler (adaptive limits, charge by outcome): it needs the checks charged. */
  readonly reportsOutcome: boolean;
  /** Some limit's rate or burst is a function of the call: its bucket is computed per call. */
  readonly dynamic: boolean;
  /** Some limit has a `blockDuration`: a denial may block its key. */
  readonly blocks: boolean;
  /** Some limit has a `maxDelay`: an admitted request may wait for its token. */
  readonly delays: boolean;
  /** Some limit has a `skip` predicate: each call narrows the route to the limits it does not skip. */
  readonly skips: boolean;
  /** `RateLimit-Policy` value, precomputed when no limit's quota can change (adaptive or dynamic). */
  readonly staticPolicy: string | undefined;
}

/**
 * Derive a route's {@link EnforcedLimits} from its limits in order, the last
 * `late` of them evaluated after the route's own guards.
 */
export function enforcedLimits(
  limits: readonly ResolvedLimit[],
  late: number,
  moduleFailMode: FailMode,
): EnforcedLimits {
  const adaptiveNames = limits
    .filter((limit) => limit.adaptive !== undefined)
    .map((limit) => limit.name);
  const chargesByOutcome = limits.some((limit) => limit.charge !== undefined);
  const dynamic = limits.some((limit) => limit.dynamic !== undefined);
  return {
    limits,
    afterRouteGuards: limits.length - late,
    buckets: limits.map((limit) => reservingBucket(limit.bucket, limit.maxDelayMs)),
    failMode: strictestFailMode(limits.map((limit) => limit.failMode ?? moduleFailMode)),
    limitNames: limits.map((limit) => limit.name),
    limitBursts: limits.map((limit) => capacityOf(limit.bucket)),
    adaptiveNames,
    chargesByOutcome,
    reportsOutcome: adaptiveNames.length > 0 || chargesByOutcome,
    dynamic,
    blocks: limits.some((limit) => limit.blockMs !== undefined),
    delays: limits.some((limit) => limit.maxDelayMs > 0),
    skips: limits.some((limit) => limit.skip !== undefined),
    staticPolicy: adaptiveNames.length > 0 || dynamic ? undefined : policyHeader(limits),
  };
}
