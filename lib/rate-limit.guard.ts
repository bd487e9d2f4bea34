import {
  Inject,
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type OnModuleDestroy,
} from '@nestjs/common';
import { AdaptiveRateProvider } from './adaptive/adaptive-rate.provider.js';
import type { RateLimitClock } from './clock.js';
import { SlotGate } from './concurrency/slot-gate.js';
import { RouteEvaluation, type RateLimitStoreFailure } from './engine/route-evaluation.js';
import { RateLimitEngine } from './engine/rate-limit-engine.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';
import { RouteSkipping } from './policies/route-skipping.js';
import {
  RATE_LIMIT_CLOCK,
  RATE_LIMIT_GUARD_BRAND,
  RESOLVED_RATE_LIMIT_OPTIONS,
} from './rate-limit.constants.js';
import {
  markGuarded,
  needsCallRecord,
  openCall,
  rateLimitCall,
  type RateLimitCall,
} from './rate-limit-call.js';
import type { CompiledRoute } from './routes/compiled-route.js';
import { RateLimitRoutes } from './routes/rate-limit-routes.js';
import type { MaybePromise } from './store/rate-limit-store.interface.js';
import type {
  RateLimitDenial,
  RateLimitTransport,
  RequestResponse,
} from './transports/rate-limit-transport.interface.js';

export type { RateLimitStoreFailure } from './engine/route-evaluation.js';

/**
 * Enforces the limits of every route (registered as `APP_GUARD` unless the
 * module is imported with `bindGlobally: false`).
 *
 * Per request, a flat path over the route compiled at start-up: the guard
 * decides which of the route's limits this call is held to (skips, and a
 * split around the route's own guards for limits keyed by user), and
 * {@link RouteEvaluation} evaluates them: one check per limit, the store
 * asked once for all of them (all-or-nothing), the route's decision steps
 * (`blockDuration`, `maxDelay`), then admitted (headers) or denied through
 * the route's transport. What the call's later steps need is left on its
 * record (`rate-limit-call.ts`).
 *
 * Extension points, for subclasses: {@link getRequestResponse},
 * {@link throwRateLimitException}, {@link onStoreFailure}.
 *
 * @publicApi
 */
@Injectable()
export class RateLimitGuard implements CanActivate, OnModuleDestroy {
  /** Lets the module recognise the guard (and subclasses) in `@UseGuards()` metadata and global guards. @internal */
  static readonly [RATE_LIMIT_GUARD_BRAND] = true;
  /** `skip` and `allowList`: which limits a call skips. */
  private readonly skipping: RouteSkipping;
  /** The evaluation of a route's limits, through this guard's extension points. */
  private readonly evaluation: RouteEvaluation;

  constructor(
    private readonly routes: RateLimitRoutes,
    engine: RateLimitEngine,
    adaptive: AdaptiveRateProvider,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) options: ResolvedModuleOptions,
    @Inject(RATE_LIMIT_CLOCK) clock: RateLimitClock,
    /** Slots of `concurrency` limits (shared with the interceptor), taken here on HTTP routes. */
    slots: SlotGate,
  ) {
    this.skipping = new RouteSkipping(options);
    // Functions calling the protected methods: a subclass's overrides are what the evaluation uses.
    this.evaluation = new RouteEvaluation(
      { engine, adaptive, options, clock, slots },
      {
        requestResponse: (context, transport) => this.getRequestResponse(context, transport),
        throwDenial: (context, denial) => this.throwRateLimitException(context, denial),
        storeFailure: (context, failure) => this.onStoreFailure(context, failure),
      },
    );
  }

  /** The module is shutting down: what the shadow limits counted in their open bursts is said. @internal */
  onModuleDestroy(): void {
    this.evaluation.close();
  }

  canActivate(context: ExecutionContext): MaybePromise<boolean> {
    const route = this.routes.forContext(context);
    if (route.limits.length === 0 && route.concurrency.length === 0)
      return this.evaluation.onlyShadow(context, route); // slots: once, below
    // Bound twice (globally and with @UseGuards()): the first evaluation is the only one.
    if (markGuarded(context)) return true;
    // A record only where a later step reads it: a plain route allocates nothing.
    if (route.skips || this.skipping.active || needsCallRecord(route)) openCall(context, route);
    if (route.skips || this.skipping.active)
      return this.skipping.narrow(context, route, this.start);
    return this.start(context, route);
  }

  /**
   * The limits keyed by user of a route that authenticates with its own
   * guards, run after them (by `RateLimitAfterRouteGuards`).
   *
   * @internal
   */
  evaluateAfterRouteGuards(context: ExecutionContext, call: RateLimitCall): MaybePromise<boolean> {
    const { route } = call;
    return this.evaluation.evaluate(
      context,
      route,
      route.afterRouteGuards,
      route.limits.length,
      call,
    );
  }

  /** Evaluate the route's limits (those the call does not skip): at once, or in two parts around the route's own guards. */
  private readonly start = (
    context: ExecutionContext,
    route: CompiledRoute,
  ): MaybePromise<boolean> => {
    const count = route.limits.length;
    // Every enforced limit skipped for this call: the shadow limits are still decided.
    if (count === 0) return this.evaluation.onlyShadow(context, route);
    if (route.afterRouteGuards === count)
      return this.evaluation.evaluate(context, route, 0, count, rateLimitCall(context));
    const call = openCall(context, route);
    call.split = { guard: this, finished: false };
    return route.afterRouteGuards === 0
      ? true
      : this.evaluation.evaluate(context, route, 0, route.afterRouteGuards, call);
  };

  /** The request (for keys) and response (for headers) of the current context, as the route's transport finds them. */
  protected getRequestResponse(
    context: ExecutionContext,
    transport: RateLimitTransport,
  ): RequestResponse {
    return transport.requestResponse(context);
  }

  /**
   * Called when a request is over a limit, after the headers are written.
   * Override to change the error (the default is the transport's: a
   * `RateLimitExceededException`, HTTP 429, for every transport today).
   */
  protected throwRateLimitException(context: ExecutionContext, denial: RateLimitDenial): never {
    throw this.routes.forContext(context).transport.denialError(denial, context);
  }

  /**
   * The store failed (already logged once per burst by the engine):
   * `failMode: 'closed'` throws the transport's unavailable error (HTTP 503);
   * `'open'` admits, and so does `'local'` (the store's local tier had its
   * chance to decide, and could not either).
   */
  protected onStoreFailure(context: ExecutionContext, failure: RateLimitStoreFailure): boolean {
    if (failure.failMode !== 'closed') return true;
    throw failure.transport.unavailableError(context);
  }
}
