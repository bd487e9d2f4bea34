import { HttpException, Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { tap, type Observable } from 'rxjs';
import { AdaptiveRateProvider } from './adaptive/adaptive-rate.provider.js';
import type { RateLimitClock } from './clock.js';
import { writeRateLimitHeaders } from './headers/write-headers.js';
import { RATE_LIMIT_CLOCK, RATE_LIMIT_INTERCEPTOR_BRAND } from './rate-limit.constants.js';
import { RESOLVED_RATE_LIMIT_OPTIONS } from './rate-limit.providers.js';
import { RATE_LIMIT_HEADERS, type RequestWithRateLimit } from './rate-limit.request-state.js';
import { RateLimitRoutes } from './rate-limit-routes.js';
import { requestResponseOf } from './request-response.js';
import type { ResolvedModuleOptions } from './resolve-module-options.js';

/**
 * Does the rate-limit work that belongs after the guard: writes the headers
 * the guard left to it, and reports each admitted request's outcome (status,
 * error, latency) to the adaptive controller of the route's adaptive limits.
 *
 * `@RateLimit()` binds it automatically to routes with adaptive limits; bind
 * it yourself elsewhere if you want it (a global interceptor costs throughput:
 * Nest wraps every intercepted call in an rxjs pipeline). Headers are written
 * exactly once whoever writes them.
 *
 * @publicApi
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor {
  /** Lets route compilation recognise this interceptor in `@UseInterceptors()` metadata. @internal */
  static readonly [RATE_LIMIT_INTERCEPTOR_BRAND] = true;

  constructor(
    private readonly routes: RateLimitRoutes,
    private readonly adaptive: AdaptiveRateProvider,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const { request, response } = requestResponseOf(context);
    const pending = (request as RequestWithRateLimit | undefined)?.[RATE_LIMIT_HEADERS];
    if (pending && response !== undefined && this.adapterHost.httpAdapter) {
      (request as RequestWithRateLimit)[RATE_LIMIT_HEADERS] = undefined;
      writeRateLimitHeaders(this.adapterHost.httpAdapter, response, this.options.headers, pending);
    }

    const names = this.routes.forContext(context).adaptiveNames;
    if (names.length === 0) return next.handle();
    const startedAt = this.clock.now();
    const report = (failed: boolean) => {
      const latencyMs = this.clock.now() - startedAt;
      // The latency also lets the controller ignore outcomes of requests admitted before its last cut.
      const outcome = { latencyMs, failed };
      for (const name of names) this.adaptive.report(name, outcome);
    };
    return next.handle().pipe(
      tap({
        complete: () => report(statusOf(response) >= 500),
        error: (error: unknown) => report(!(error instanceof HttpException) || error.getStatus() >= 500),
      }),
    );
  }
}

/** The status set so far (Express `res.statusCode`, Fastify `reply.statusCode`); 200 when unknown. */
function statusOf(response: unknown): number {
  const status = (response as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof status === 'number' ? status : 200;
}
