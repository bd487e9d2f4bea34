import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';

/**
 * Whether limits need work after the handler, which only
 * `RateLimitInterceptor` can do: adaptive limits, whose outcomes it reports,
 * limits that count only failures or only successes, whose tokens it
 * gives back when the outcome says so, and `concurrency` limits, whose
 * slots it takes and releases. The one rule deciding where the interceptor is bound:
 * `@RateLimit()` binds it to the routes it decorates, and the module binds
 * it globally when its own `limits` or `defaults` need it.
 */
export function needsAfterHandler(limits: readonly (RateLimitOptions | undefined)[]): boolean {
  return limits.some(
    (limit) =>
      limit?.adaptive !== undefined ||
      (limit?.charge !== undefined && limit.charge !== 'always') ||
      limit?.concurrency !== undefined,
  );
}
