import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { LIMIT_POLICIES } from '../policies/limit-policies.js';

/**
 * Whether limits need work after the handler, which only
 * `RateLimitInterceptor` can do: a policy's step after the handler (adaptive
 * limits report their outcomes, `charge` gives tokens back: each policy says
 * when, `LimitPolicy.needsInterceptor`), and `concurrency` limits, whose
 * slots it takes and releases. The one rule deciding where the interceptor is bound:
 * `@RateLimit()` binds it to the routes it decorates, and the module binds
 * it globally when its own `limits` or `defaults` need it.
 */
export function needsAfterHandler(limits: readonly (RateLimitOptions | undefined)[]): boolean {
  return limits.some(
    (limit) =>
      limit !== undefined &&
      (limit.concurrency !== undefined ||
        LIMIT_POLICIES.some((policy) => policy.needsInterceptor?.(limit) === true)),
  );
}
