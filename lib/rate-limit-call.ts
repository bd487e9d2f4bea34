import type { ExecutionContext } from '@nestjs/common';
import type { RateLimitDecision } from './algorithms/rate-limit-decision.js';
import type { HeaderLimit } from './headers/rate-limit-headers.js';
import type { HeaderSource } from './headers/write-headers.js';
import type { CompiledRoute } from './routes/compiled-route.js';
import type { RateLimitCheck, StoreLimit } from './store/rate-limit-store.interface.js';

/**
 * What the steps of one call share, from the guard to the interceptor: the
 * one place per-call state lives. Kept under one symbol on the call (see
 * {@link callOf}), so nothing is visible to application code or serialisers.
 *
 * Created only for a call whose route needs something after the guard; the
 * guard's own "evaluated once" mark is on the execution context
 * ({@link markGuarded}), which costs a plain route nothing more.
 *
 * @internal
 */
export interface RateLimitCall {
  /** The route as this call applies it: narrowed to the limits it does not skip. */
  route: CompiledRoute;
  /**
   * Set on a route evaluated in two parts (limits keyed by user wait for the
   * route's own guards): the guard that ran the first part (a subclass keeps
   * its overrides for the second), and whether the second has run.
   */
  split: { readonly guard: AfterRouteGuardsEvaluator; finished: boolean } | undefined;
  /** What the first part charged (refunded if the second denies) and decided (reported with the second's). */
  early:
    | {
        readonly checks: readonly RateLimitCheck[];
        readonly decisions: readonly RateLimitDecision[];
      }
    | undefined;
  /** The first part's buckets, on routes whose rate or burst depends on the call. */
  earlyBuckets:
    | { readonly limits: readonly HeaderLimit[]; readonly buckets: readonly StoreLimit[] }
    | undefined;
  /** The checks charged for an admitted call, one per limit in order: for the interceptor's outcome work. */
  charged: readonly RateLimitCheck[] | undefined;
  /** Headers the guard leaves for `RateLimitInterceptor` to write (routes where it is bound). */
  headers: HeaderSource | undefined;
  /** Concurrency slots: what the interceptor is to take, or those the guard took, to release when the handler ends. */
  slots: SlotAdmission | HeldSlots | undefined;
  /** The interceptor reported this call's outcome (bound twice, it reports once). */
  intercepted: boolean;
}

/** The second part of a split evaluation, run by `RateLimitAfterRouteGuards`. @internal */
export interface AfterRouteGuardsEvaluator {
  evaluateAfterRouteGuards(
    context: ExecutionContext,
    call: RateLimitCall,
  ): boolean | Promise<boolean>;
}

/**
 * What the guard hands the interceptor on a route with `concurrency` limits,
 * other than HTTP: the call passed its rate limits (or had none), so its
 * slots are to be taken after every guard of the route (a later guard that
 * refuses the call would otherwise leave its slot held until the lease runs
 * out: interceptors never see such calls, and these transports have no
 * response whose end would tell); if one is refused, what was charged is
 * given back. (HTTP has one: the guard takes the slots.)
 *
 * @internal
 */
export interface SlotAdmission {
  /** The rate checks charged for the call (refunded if a slot is refused). */
  readonly charged: readonly RateLimitCheck[];
  /** The rate limits' headers, written with the slots' (absent when the rate part said nothing). */
  readonly source: HeaderSource | undefined;
}

/**
 * HTTP: the slots the guard took. The interceptor says when the handler
 * starts (from then on the response closing no longer releases them) and
 * gets their one release, for its `finalize`. @internal
 */
export interface HeldSlots {
  /** The release takes whether the call failed (an adaptive limit counts failures). */
  readonly handlerStarted: () => (failed?: boolean) => void;
}

const RATE_LIMIT_CALL: unique symbol = Symbol('RATE_LIMIT:CALL');
const RATE_LIMIT_GUARDED: unique symbol = Symbol('RATE_LIMIT:GUARDED');

interface CallCarrier {
  [RATE_LIMIT_CALL]?: RateLimitCall;
}

interface GuardedContext {
  [RATE_LIMIT_GUARDED]?: true;
}

/**
 * Whether a rate-limit guard already evaluated this call, marking it if not.
 * On the execution context, which Nest shares among the guards of one call
 * (the guard bound twice, globally and with `@UseGuards()`, evaluates once):
 * a write on an object made per call anyway, where a property on the request
 * would be one more on a platform object for every call, plain or not.
 */
export function markGuarded(context: ExecutionContext): boolean {
  const guarded = context as GuardedContext;
  if (guarded[RATE_LIMIT_GUARDED] === true) return true;
  guarded[RATE_LIMIT_GUARDED] = true;
  return false;
}

/**
 * The object that stands for one call: the HTTP request, else the call's
 * arguments array, which Nest hands the guards and the interceptors of one
 * WebSocket, microservice or GraphQL call alike (their request objects are
 * shared by every call of a connection or an operation). A symbol property
 * rather than a `WeakMap`: measured ~20 ns against ~300 ns per request.
 */
function callOf(context: ExecutionContext): CallCarrier {
  if (context.getType() === 'http') {
    const request: unknown = context.getArgByIndex(0);
    if (typeof request === 'object' && request !== null) return request as CallCarrier;
  }
  return context.getArgs() as CallCarrier;
}

/** Whether a later step of a call on `route` reads its record: the second part, the interceptor, the slots. */
export function needsCallRecord(route: CompiledRoute): boolean {
  return (
    route.afterRouteGuards < route.limits.length ||
    route.interceptorBound ||
    route.reportsOutcome ||
    route.concurrency.length > 0
  );
}

/** This call's record, if the guard left one. */
export function rateLimitCall(context: ExecutionContext): RateLimitCall | undefined {
  return callOf(context)[RATE_LIMIT_CALL];
}

/** The call's record, created on first use. */
export function openCall(context: ExecutionContext, route: CompiledRoute): RateLimitCall {
  const carrier = callOf(context);
  const state = carrier[RATE_LIMIT_CALL];
  if (state !== undefined) return state;
  const call: RateLimitCall = {
    route,
    split: undefined,
    early: undefined,
    earlyBuckets: undefined,
    charged: undefined,
    headers: undefined,
    slots: undefined,
    intercepted: false,
  };
  carrier[RATE_LIMIT_CALL] = call;
  return call;
}
