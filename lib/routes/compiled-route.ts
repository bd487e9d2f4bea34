import type { ResolvedConcurrencyLimit } from '../concurrency/resolve-concurrency-limit.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import type { RateLimitTransport } from '../transports/rate-limit-transport.interface.js';
import type { EnforcedLimits } from './enforced-limits.js';

/**
 * Everything the request path needs about one handler, computed once (at
 * start-up for controllers, on first use for resolvers, gateways and message
 * handlers) and only read afterwards. What depends on the enforced limits is
 * {@link EnforcedLimits}, derived by one function for the route and for each
 * narrowing of it by `skip`.
 *
 * @internal
 */
export interface CompiledRoute extends EnforcedLimits {
  /** The route's part of its bucket keys, and its name in diagnostics. */
  readonly routeId: string;
  /** How this handler's context is met (request, headers, errors, outcomes). */
  readonly transport: RateLimitTransport;
  /** The module's fail mode, for the limits of a narrowing that declare none. */
  readonly moduleFailMode: EnforcedLimits['failMode'];
  /**
   * The `concurrency` limits: slots taken once the call passed the rate
   * limits above (`lib/concurrency/`).
   */
  readonly concurrency: readonly ResolvedConcurrencyLimit[];
  /** Their names and slot counts, for the decision channel, built once. */
  readonly concurrencyNames: readonly string[];
  readonly concurrencyBursts: readonly number[];
  /** Limits in shadow mode: decided and charged after the others admitted, never denying. */
  readonly shadowLimits: readonly ResolvedLimit[];
  /** `RateLimitInterceptor` is bound to this route: it writes the headers. */
  readonly interceptorBound: boolean;
}
