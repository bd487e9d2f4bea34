import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants.js';
import { rateLimitCall } from '../rate-limit-call.js';
import { RATE_LIMIT_GUARD_BRAND } from '../rate-limit.constants.js';

/**
 * The second part of a route's evaluation: the limits keyed by user, run
 * after the route's own guards, since those guards (Passport's `AuthGuard`,
 * a JWT guard) are what sets `req.user`. Global guards always run before
 * controller and route guards, so the global `RateLimitGuard` cannot see the
 * user they authenticate; this object is placed last in the handler's guards
 * instead.
 *
 * It is an object, not a class Nest would instantiate, and holds no state of
 * its own: one instance serves every application in the process, and it
 * acts only where a rate-limit guard ran the first part on the same call.
 *
 * @internal
 */
export class RateLimitAfterRouteGuards implements CanActivate {
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const call = rateLimitCall(context);
    if (call?.split === undefined || call.split.finished) return true;
    call.split.finished = true;
    return call.split.guard.evaluateAfterRouteGuards(context, call);
  }
}

const afterRouteGuards = new RateLimitAfterRouteGuards();

/** The guards bound to a class or handler with `@UseGuards()`. */
export function boundGuards(target: object): readonly unknown[] {
  return (Reflect.getMetadata(GUARDS_METADATA, target) as unknown[] | undefined) ?? [];
}

/** A rate-limit guard (the class, a subclass or an instance), recognised by its brand. */
export function isRateLimitGuard(guard: unknown): boolean {
  const type = typeof guard === 'function' ? guard : (guard as object | null)?.constructor;
  return (
    (type as { [RATE_LIMIT_GUARD_BRAND]?: boolean } | undefined)?.[RATE_LIMIT_GUARD_BRAND] === true
  );
}

/** Guards of the route's own that may authenticate (anything but the rate limiter's). */
export function hasOwnGuards(controller: object, handler: object): boolean {
  const own = (guard: unknown) =>
    !isRateLimitGuard(guard) && !(guard instanceof RateLimitAfterRouteGuards);
  return boundGuards(controller).some(own) || boundGuards(handler).some(own);
}

/** Whether the handler's guards end with the second part (so its user-keyed limits wait for them). */
export function runsAfterRouteGuards(handler: object): boolean {
  return boundGuards(handler).some((guard) => guard instanceof RateLimitAfterRouteGuards);
}

/**
 * Put the second part last among the handler's guards (method guards run
 * after class guards, so last of all). Done before Nest reads the metadata,
 * that is while providers are instantiated; idempotent, since several
 * applications in one process share the handler functions.
 */
export function bindAfterRouteGuards(handler: object): void {
  if (runsAfterRouteGuards(handler)) return;
  Reflect.defineMetadata(GUARDS_METADATA, [...boundGuards(handler), afterRouteGuards], handler);
}
