import { policyHeader } from '../headers/rate-limit-headers.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import { strictestFailMode } from '../limits/fail-mode.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import type { AfterHandlerStep, DecisionStep } from '../policies/call-steps.js';
import { reservingBucket } from '../policies/delay/reservation.js';
import { LIMIT_POLICIES } from '../policies/limit-policies.js';
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
  /** The steps of the limits' policies on the store's decision, in registry order (`blockDuration`, `maxDelay`). */
  readonly decisionSteps: readonly DecisionStep[];
  /** Their steps after the handler, in registry order (adaptive, `charge`): run by the interceptor. */
  readonly afterHandlerSteps: readonly AfterHandlerStep[];
  /** The interceptor has work after the handler: it needs the checks charged. */
  readonly reportsOutcome: boolean;
  /** Some limit's rate or burst is a function of the call: its bucket is computed per call. */
  readonly dynamic: boolean;
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
  const applying = LIMIT_POLICIES.filter((policy) =>
    limits.some((limit) => policy.appliesTo(limit)),
  );
  const afterHandlerSteps = applying.flatMap((policy) => policy.afterHandler ?? []);
  const adaptive = limits.some((limit) => limit.adaptive !== undefined);
  const dynamic = limits.some((limit) => limit.dynamic !== undefined);
  return {
    limits,
    afterRouteGuards: limits.length - late,
    buckets: limits.map((limit) => reservingBucket(limit.bucket, limit.maxDelayMs)),
    failMode: strictestFailMode(limits.map((limit) => limit.failMode ?? moduleFailMode)),
    limitNames: limits.map((limit) => limit.name),
    limitBursts: limits.map((limit) => capacityOf(limit.bucket)),
    decisionSteps: applying.flatMap((policy) => policy.onDecision ?? []),
    afterHandlerSteps,
    reportsOutcome: afterHandlerSteps.length > 0,
    dynamic,
    skips: limits.some((limit) => limit.skip !== undefined),
    staticPolicy: adaptive || dynamic ? undefined : policyHeader(limits),
  };
}
