import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';

/**
 * Whether limits need work after the handler, which only
 * `RateLimitInterceptor` can do (today: adaptive limits, whose outcomes it
 * reports). The one rule deciding where the interceptor is bound:
 * `@RateLimit()` binds it to the routes it decorates, and the module binds
 * it globally when its own `limits` or `defaults` need it.
 */
export function needsAfterHandler(limits: readonly (RateLimitOptions | undefined)[]): boolean {
  return limits.some((limit) => limit?.adaptive !== undefined);
}
