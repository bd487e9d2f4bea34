import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import type { ResolvedLimit } from './resolved-limit.js';

/**
 * Everything the guard needs about one handler, computed once and cached.
 *
 * @internal
 */
export interface CompiledRoute {
  readonly limits: readonly ResolvedLimit[];
  /** `RateLimitInterceptor` is bound to this route: it writes the headers. */
  readonly interceptorBound: boolean;
  /** The strictest fail mode of the route's limits (each its own, else the module's). */
  readonly failMode: FailMode;
  /** Names of the adaptive limits, whose outcomes the interceptor reports. */
  readonly adaptiveNames: readonly string[];
  /** `RateLimit-Policy` value, precomputed when no limit is adaptive (the quota cannot change). */
  readonly staticPolicy: string | undefined;
}
