import {
  Inject,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type OnModuleDestroy,
} from '@nestjs/common';
import { finalize, tap, type Observable } from 'rxjs';
import { AdaptiveRateProvider } from './adaptive/adaptive-rate.provider.js';
import type { RateLimitClock } from './clock.js';
import {
  RATE_LIMIT_CLOCK,
  RATE_LIMIT_INTERCEPTOR_BRAND,
  RESOLVED_RATE_LIMIT_OPTIONS,
} from './rate-limit.constants.js';
import { openCall, rateLimitCall, type RateLimitCall } from './rate-limit-call.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';
import { RateLimitRoutes } from './routes/rate-limit-routes.js';
import type { CompiledRoute } from './routes/compiled-route.js';
import { checksToRefund, failedByDefault } from './policies/charge-by-outcome.js';
import { RateLimitEngine } from './engine/rate-limit-engine.js';
import { SlotGate } from './concurrency/slot-gate.js';
import type { RateLimitCheck } from './store/rate-limit-store.interface.js';

/**
 * Does the rate-limit work that belongs after the guard: writes the headers
 * the guard left to it, reports each admitted request's outcome (as the
 * route's transport judges it, with its latency) to the adaptive controller
 * of the route's adaptive limits, and holds the slots of `concurrency`
 * limits while the handler runs (`concurrency/slot-gate.ts`).
 *
 * Bound where it is needed (see `needsAfterHandler`): `@RateLimit()` binds it
 * to routes with adaptive limits, and the module binds it globally when its
 * own `limits` or `defaults` are adaptive. Bind it yourself elsewhere if you
 * want it (a global interceptor costs throughput: Nest wraps every
 * intercepted call in an rxjs pipeline). Bound twice on one route, it does
 * its work once: headers are written exactly once, outcomes reported once.
 *
 * @publicApi
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor, OnModuleDestroy {
  /** Lets route compilation recognise this interceptor in `@UseInterceptors()` metadata. @internal */
  static readonly [RATE_LIMIT_INTERCEPTOR_BRAND] = true;

  private readonly logger = new Logger('RateLimit');
  /** Limits whose `isFailure` threw, already said in the log. */
  private readonly predicateErrors = new Set<string>();
  /** Slots of `concurrency` limits: taken before the handler, released when it ends. */
  private readonly slots: SlotGate;

  constructor(
    private readonly routes: RateLimitRoutes,
    private readonly engine: RateLimitEngine,
    private readonly adaptive: AdaptiveRateProvider,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
  ) {
    this.slots = new SlotGate(engine, options, clock);
  }

  /** The module is shutting down: release failures counted are said. @internal */
  onModuleDestroy(): void {
    this.slots.close();
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const compiled = this.routes.forContext(context);
    const { transport } = compiled;
    const { request, response } = transport.requestResponse(context);
    // The guard's record of this call, with the route narrowed to the limits the call did not skip.
    const call = rateLimitCall(context);
    const route = call?.route ?? compiled;
    const pending = call?.headers;
    if (pending) {
      call!.headers = undefined;
      transport.writeHeaders(response, this.options.headers, pending);
    }

    // Taken once: a second binding of the interceptor finds none and takes no second slot.
    const admission = route.concurrency.length > 0 ? call?.slots : undefined;
    if (admission !== undefined) call!.slots = undefined;
    if (admission !== undefined && 'release' in admission)
      return this.afterHandler(context, next, route, request, response).pipe(
        finalize(admission.release),
      );
    if (admission !== undefined) {
      return this.slots.hold(context, route, { request, response }, admission, () =>
        this.afterHandler(context, next, route, request, response),
      );
    }
    return this.afterHandler(context, next, route, request, response);
  }

  /** The handler, with its outcome reported where the route's limits want it (adaptive, charge by outcome). */
  private afterHandler(
    context: ExecutionContext,
    next: CallHandler,
    route: CompiledRoute,
    request: unknown,
    response: unknown,
  ): Observable<unknown> {
    if (!route.reportsOutcome) return next.handle();
    const call: RateLimitCall = openCall(context, route);
    if (call.intercepted) return next.handle();
    call.intercepted = true;
    const startedAt = this.clock.now();
    // The checks the guard charged (absent when the store failed and the request was admitted anyway).
    const checks = call.charged;
    const { limits } = route;
    const report = (error: unknown) => {
      if (route.adaptiveNames.length > 0)
        this.reportAdaptive(route, checks, response, error, startedAt);
      if (!route.chargesByOutcome) return;
      const outcome = { error, response, context, failed: failedByDefault(error, response) };
      const refunds = checksToRefund(limits, checks, outcome, this.onPredicateError);
      if (refunds !== undefined) this.engine.refundCharged(refunds);
    };
    return next.handle().pipe(
      tap({
        complete: () => report(undefined),
        error: (error: unknown) => report(error),
      }),
    );
  }

  /** The outcome, with its latency, to the adaptive controller of each adaptive limit. */
  private reportAdaptive(
    route: CompiledRoute,
    checks: readonly RateLimitCheck[] | undefined,
    response: unknown,
    error: unknown,
    startedAt: number,
  ): void {
    // A clock stepped back during the request (NTP, a test clock) would give a
    // negative latency, which the controller rightly refuses: the handler's
    // answer must not turn into an error because of it.
    const latencyMs = Math.max(0, this.clock.now() - startedAt);
    // The latency also lets the controller ignore outcomes of requests admitted before its last cut.
    const result = { error, response, latencyMs, failed: route.transport.failed(response, error) };
    for (let i = 0; i < route.limits.length; i++) {
      const limit = route.limits[i]!;
      if (limit.adaptive) this.adaptive.reportResult(limit.name, result, checks?.[i]?.key);
    }
  }

  /** An `isFailure` that throws leaves the request charged; said once per limit. */
  private readonly onPredicateError = (limitName: string, error: unknown): void => {
    if (this.predicateErrors.has(limitName)) return;
    this.predicateErrors.add(limitName);
    this.logger.error(
      `RateLimit: limit "${limitName}": isFailure threw (${error instanceof Error ? error.message : String(error)}); ` +
        'the request stays charged. Said once per limit.',
    );
  };
}
