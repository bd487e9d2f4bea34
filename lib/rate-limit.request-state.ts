import type { RateLimitDecision } from './algorithms/rate-limit-decision.js';
import type { HeaderSource } from './headers/write-headers.js';
import type { RateLimitCheck, StoreLimit } from './store/rate-limit-store.interface.js';
import type { HeaderLimit } from './headers/rate-limit-headers.js';
import type { CompiledRoute } from './routes/compiled-route.js';

/**
 * Where the guard leaves the headers for `RateLimitInterceptor` on routes
 * where the interceptor writes them. A symbol: invisible to application code
 * and to serialisers.
 *
 * @internal
 */
export const RATE_LIMIT_HEADERS: unique symbol = Symbol('RATE_LIMIT:HEADERS');

/**
 * Where the guard leaves, on routes with adaptive limits, the checks it
 * charged an admitted request (one per limit of the route, in order): the
 * interceptor reports each adaptive limit's outcome with its bucket key, for
 * `maxKeyShare`. The array the guard built anyway: nothing is allocated for
 * it, and nothing at all on routes that are not adaptive.
 *
 * @internal
 */
export const RATE_LIMIT_CHECKS: unique symbol = Symbol('RATE_LIMIT:CHECKS');

/**
 * Where the guard leaves, on the request, the route narrowed to the limits a
 * call does not skip (`skip`): what the interceptor then works with (its
 * checks and headers are the narrowed route's). On the request, not the
 * execution context: Nest gives guards and interceptors different context
 * objects. Absent when nothing was skipped.
 *
 * @internal
 */
export const RATE_LIMIT_ROUTE: unique symbol = Symbol('RATE_LIMIT:ROUTE');

/** @internal */
export interface RequestWithRateLimit {
  [RATE_LIMIT_HEADERS]?: HeaderSource;
  [RATE_LIMIT_CHECKS]?: readonly RateLimitCheck[];
  [RATE_LIMIT_ROUTE]?: CompiledRoute;
}

/**
 * Where the guard records, on the execution context (one object for every
 * guard of a call), that this call's limits are being evaluated: a second
 * binding of the guard then does nothing, and the limits that wait for the
 * route's own guards know what the first part charged. A symbol property
 * rather than a `WeakMap`: measured ~20 ns against ~300 ns per request.
 *
 * @internal
 */
export const RATE_LIMIT_EVALUATION: unique symbol = Symbol('RATE_LIMIT:EVALUATION');

/** The whole route was evaluated at once. @internal */
export const EVALUATED = 'evaluated';

/**
 * A route whose limits keyed by user wait for the route's own guards (which
 * authenticate): the state between the two parts of its evaluation.
 *
 * @internal
 */
export interface SplitEvaluation {
  /** The guard that evaluated the first part (a subclass keeps its overrides for the second). */
  readonly guard: { evaluateAfterRouteGuards(context: object, evaluation: SplitEvaluation): boolean | Promise<boolean> };
  /** What the first part charged, to refund if the second denies, and to report in the headers. */
  early: { readonly checks: readonly RateLimitCheck[]; readonly decisions: readonly RateLimitDecision[] } | undefined;
  /** The second part ran (the slot may be reached twice if it is bound twice). */
  finished: boolean;
  /** The route being evaluated (narrowed to the limits the call does not skip). */
  readonly route: CompiledRoute;
  /** The first part's buckets, on routes whose rate or burst depends on the call. */
  buckets?: { readonly limits: readonly HeaderLimit[]; readonly buckets: readonly StoreLimit[] };
}

/**
 * Where `RateLimitInterceptor` records, on the execution context (one object
 * for every interceptor of a call), that the call's outcome is being
 * reported: bound twice (globally and on the route), it reports once. A
 * symbol property, like {@link RATE_LIMIT_EVALUATION}, not a `WeakSet`.
 *
 * @internal
 */
export const RATE_LIMIT_INTERCEPTED: unique symbol = Symbol('RATE_LIMIT:INTERCEPTED');

/** @internal */
export interface ContextWithEvaluation {
  [RATE_LIMIT_EVALUATION]?: typeof EVALUATED | SplitEvaluation;
  [RATE_LIMIT_INTERCEPTED]?: true;
}
