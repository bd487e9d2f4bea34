import type { ResolvedConcurrencyLimit } from '../concurrency/resolve-concurrency-limit.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import type { StoreLimit } from '../store/rate-limit-store.interface.js';
import type { RateLimitTransport } from '../transports/rate-limit-transport.interface.js';

/**
 * Everything the request path needs about one handler, computed once (at
 * start-up for controllers, on first use for resolvers, gateways and message
 * handlers) and only read afterwards.
 *
 * @internal
 */
export interface CompiledRoute {
  /** The route's part of its bucket keys, and its name in diagnostics. */
  readonly routeId: string;
  /** How this handler's context is met (request, headers, errors, outcomes). */
  readonly transport: RateLimitTransport;
  /** The limits that decide (shadow limits excepted). */
  readonly limits: readonly ResolvedLimit[];
  /**
   * The `concurrency` limits: slots taken by `RateLimitInterceptor` once the
   * guard admitted the call on the limits above (`lib/concurrency/`).
   */
  readonly concurrency: readonly ResolvedConcurrencyLimit[];
  /** Their names and slot counts, for the decision channel, built once. */
  readonly concurrencyNames: readonly string[];
  readonly concurrencyBursts: readonly number[];
  /** Limits in shadow mode: decided and charged after the others admitted, never denying. */
  readonly shadowLimits: readonly ResolvedLimit[];
  /**
   * Index of the first limit evaluated after the route's own guards (limits
   * keyed by user on a route that authenticates with its own guards; they
   * come last in `limits`); `limits.length` when every limit is evaluated at once.
   */
  readonly afterRouteGuards: number;
  /** The store bucket of each limit as declared (adaptive limits move away from it). */
  readonly buckets: readonly StoreLimit[];
  /** `RateLimitInterceptor` is bound to this route: it writes the headers. */
  readonly interceptorBound: boolean;
  /** The strictest fail mode of the route's rate limits (each its own, else the module's). */
  readonly failMode: FailMode;
  /** Names of the adaptive limits, whose outcomes the interceptor reports. */
  readonly adaptiveNames: readonly string[];
  /**
   * The interceptor has work after the handler (adaptive limits, limits that
   * count only failures or successes): the guard leaves it the bucket keys it charged.
   */
  readonly reportsOutcome: boolean;
  /** Some limit counts only failures or only successes: the interceptor may give tokens back. */
  readonly chargesByOutcome: boolean;
  /** Some limit's rate or burst is a function of the call: its bucket is computed per call. */
  readonly dynamic: boolean;
  /** Some limit has a `blockDuration`: a denial may block its key. */
  readonly blocks: boolean;
  /** Some limit has a `maxDelay`: its check charges the reserving bucket, and an admitted request may wait. */
  readonly delays: boolean;
  /** Some limit has a `skip` predicate: each call narrows the route to the limits it does not skip. */
  readonly skips: boolean;
  /** `limits`' names and configured bursts, in order: what the decision channel publishes, built once. */
  readonly limitNames: readonly string[];
  readonly limitBursts: readonly number[];
  /** `RateLimit-Policy` value, precomputed when no limit is adaptive (the quota cannot change). */
  readonly staticPolicy: string | undefined;
}
