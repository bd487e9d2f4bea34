import { UseInterceptors } from '@nestjs/common';
import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { RATE_LIMIT_METADATA } from '../rate-limit.constants.js';
import { RateLimitInterceptor } from '../rate-limit.interceptor.js';
import { needsAfterHandler } from '../routes/after-handler.js';

/**
 * Declare one or more limits on a controller (every route) or a route handler.
 *
 * All limits that apply to a request must admit it; a request denied by one
 * is charged to none. A handler's limit replaces a class (or module-wide)
 * limit of the same `name`. Limits are validated when the application starts.
 * Where a limit needs work after the handler (adaptive limits), this also
 * binds {@link RateLimitInterceptor} to the route.
 *
 * @example
 * ```ts
 * @RateLimit({ rate: '10/s', burst: 20, key: 'user' })
 * @Controller('orders')
 * export class OrdersController {
 *   @RateLimit({ name: 'search', rate: 5, burst: 10, cost: 2 })
 *   @Get() search() {}
 * }
 * ```
 * @publicApi
 */
export function RateLimit(
  limits: RateLimitOptions | readonly RateLimitOptions[],
): ClassDecorator & MethodDecorator {
  const declared = Array.isArray(limits)
    ? [...(limits as readonly RateLimitOptions[])]
    : [limits as RateLimitOptions];
  const bindInterceptor = needsAfterHandler(declared);
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const where = descriptor ? descriptor.value : target;
    // Stacked @RateLimit() decorators add up; duplicate names are reported at start-up.
    const existing: RateLimitOptions[] = Reflect.getMetadata(RATE_LIMIT_METADATA, where) ?? [];
    Reflect.defineMetadata(RATE_LIMIT_METADATA, [...declared, ...existing], where);
    if (bindInterceptor) {
      if (descriptor) UseInterceptors(RateLimitInterceptor)(target, _key!, descriptor);
      else UseInterceptors(RateLimitInterceptor)(target as Function);
    }
  };
}
