import type { ExecutionContext } from '@nestjs/common';
import type { HeaderSource } from '../headers/write-headers.js';
import type { RateLimitCheck } from '../store/rate-limit-store.interface.js';

/**
 * What the guard hands `RateLimitInterceptor` for a call on a route with
 * `concurrency` limits, other than HTTP: the call passed its rate limits (or
 * had none), so its slots are to be taken, and if one is refused, what it
 * was charged is given back. The slots are taken by the interceptor, after
 * every guard of the route: a guard after this one that refuses the call
 * (authentication) would otherwise leave its slot held until the lease runs
 * out, since interceptors never see such calls and these transports have no
 * response whose end would tell. (HTTP has one: the guard takes the slots.)
 *
 * @internal
 */
export interface SlotAdmission {
  /** The rate checks charged for the call (refunded if a slot is refused). */
  readonly charged: readonly RateLimitCheck[];
  /** The rate limits' headers, written with the slots' (absent when the rate part said nothing). */
  readonly source: HeaderSource | undefined;
}

/** What the guard leaves on HTTP calls, where it took the slots itself: their one release, for the interceptor's `finalize`. */
export interface HeldSlots {
  readonly release: () => void;
}

/**
 * Keyed by the call: the HTTP request, else the call's arguments array,
 * which Nest hands the guards and the interceptors of one WebSocket,
 * microservice or GraphQL call alike (their request objects are shared by
 * every call of a connection or an operation). A `WeakMap`: a call whose
 * interceptor never runs takes its entry with it.
 */
const admissions = new WeakMap<object, SlotAdmission | HeldSlots>();

function callOf(context: ExecutionContext): object {
  if (context.getType() === 'http') {
    const request: unknown = context.switchToHttp().getRequest();
    if (typeof request === 'object' && request !== null) return request;
  }
  return context.getArgs();
}

/** The guard admitted the call: its slots are the interceptor's to take. */
export function admitToSlots(context: ExecutionContext, charged: readonly RateLimitCheck[], source: HeaderSource | undefined): void {
  admissions.set(callOf(context), { charged, source });
}

/** HTTP: the guard holds the call's slots; the interceptor releases them when the handler ends. */
export function holdSlots(context: ExecutionContext, release: () => void): void {
  admissions.set(callOf(context), { release });
}

/** The call's admission (or its held slots), once: a second binding of the interceptor finds none and takes no second slot. */
export function takeAdmission(context: ExecutionContext): SlotAdmission | HeldSlots | undefined {
  const call = callOf(context);
  const admission = admissions.get(call);
  if (admission !== undefined) admissions.delete(call);
  return admission;
}
