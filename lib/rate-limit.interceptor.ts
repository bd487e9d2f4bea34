import {
  Inject,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
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
import type { AfterHandlerServices, HandlerOutcome } from './policies/call-steps.js';
import { RateLimitEngine } from './engine/rate-limit-engine.js';
import { SlotGate } from './concurrency/slot-gate.js';
import { callFailed } from './concurrency/adaptive/adaptive-tickets.js';
import { answerAdmitted } from './transports/call-answer.js';

/**
 * Does the rate-limit work that belongs after the guard: writes the headers
 * the guard left to it, holds the slots of `concurrency` limits while the
 * handler runs (`concurrency/slot-gate.ts`), and runs the route's steps
 * after the handler on its outcome (`route.afterHandlerSteps`: adaptive
 * limits report it to their controller, `charge` gives tokens back).
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
export class RateLimitInterceptor implements NestInterceptor {
  /** Lets route compilation recognise this interceptor in `@UseInterceptors()` metadata. @internal */
  static readonly [RATE_LIMIT_INTERCEPTOR_BRAND] = true;

  private readonly logger = new Logger('RateLimit');
  /** Limits whose `isChargeFailure` threw, already said in the log. */
  private readonly predicateErrors = new Set<string>();
  /** What the policies' steps after the handler use. */
  private readonly services: AfterHandlerServices;

  constructor(
    private readonly routes: RateLimitRoutes,
    engine: RateLimitEngine,
    adaptive: AdaptiveRateProvider,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
    /** Slots of `concurrency` limits (shared with the guard): taken before the handler, released when it ends. */
    private readonly slots: SlotGate,
  ) {
    this.services = { engine, adaptive, onPredicateError: this.onPredicateError };
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
      answerAdmitted(transport, response, this.options.headers, pending);
    }

    // Taken once: a second binding of the interceptor finds none and takes no second slot.
    const admission = route.concurrency.length > 0 ? call?.slots : undefined;
    if (admission !== undefined) call!.slots = undefined;
    if (admission !== undefined && 'handlerStarted' in admission) {
      const release = admission.handlerStarted();
      let error: unknown;
      return this.afterHandler(context, next, route, response).pipe(
        tap({ error: (thrown: unknown) => void (error = thrown ?? new Error('handler failed')) }),
        finalize(() => release(callFailed(error))),
      );
    }
    if (admission !== undefined) {
      return this.slots.hold(context, route, { request, response }, admission, () =>
        this.afterHandler(context, next, route, response),
      );
    }
    return this.afterHandler(context, next, route, response);
  }

  /** The handler, with the route's steps after it run on its outcome. */
  private afterHandler(
    context: ExecutionContext,
    next: CallHandler,
    route: CompiledRoute,
    response: unknown,
  ): Observable<unknown> {
    if (!route.reportsOutcome) return next.handle();
    const call: RateLimitCall = openCall(context, route);
    if (call.intercepted) return next.handle();
    call.intercepted = true;
    const startedAt = this.clock.now();
    // The last value the handler emitted: its return value, or a stream's last event (`settle`).
    let result: unknown;
    const report = (error: unknown) => {
      const outcome: HandlerOutcome = {
        context,
        limits: route.limits,
        // The checks the guard charged (absent when the store failed and the request was admitted anyway).
        checks: call.charged,
        response,
        result: error === undefined ? result : undefined,
        error,
        failed: route.transport.failed(response, error),
        // A clock stepped back during the request (NTP, a test clock) would give a
        // negative latency, which a controller rightly refuses: the handler's
        // answer must not turn into an error because of it. The latency also lets
        // a controller ignore outcomes of requests admitted before its last cut.
        latencyMs: Math.max(0, this.clock.now() - startedAt),
      };
      for (const step of route.afterHandlerSteps) step(outcome, this.services);
    };
    return next.handle().pipe(
      tap({
        next: (value: unknown) => {
          result = value;
        },
        complete: () => report(undefined),
        error: (error: unknown) => report(error),
      }),
    );
  }

  /** An `isChargeFailure` (or deprecated `isFailure`) that throws leaves the request charged; said once per limit. */
  private readonly onPredicateError = (limitName: string, error: unknown): void => {
    if (this.predicateErrors.has(limitName)) return;
    this.predicateErrors.add(limitName);
    this.logger.error(
      `RateLimit: limit "${limitName}": isChargeFailure threw (${error instanceof Error ? error.message : String(error)}); ` +
        'the request stays charged. Said once per limit.',
    );
  };
}
