import {
  Inject,
  Injectable,
  ServiceUnavailableException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AdaptiveRateProvider } from './adaptive/adaptive-rate.provider.js';
import type { BucketLimit } from './algorithms/gcra.js';
import type { RateLimitClock } from './clock.js';
import { retryAfterSeconds, type HeaderLimit } from './headers/rate-limit-headers.js';
import { writeRateLimitHeaders, type HeaderSource } from './headers/write-headers.js';
import type { RequestLike } from './keys/key-strategy.js';
import { requestResponseOf, type RequestResponse } from './request-response.js';
import type { CompiledRoute } from './limits/compiled-route.js';
import type { ResolvedLimit } from './limits/resolved-limit.js';
import { RATE_LIMIT_CLOCK } from './rate-limit.constants.js';
import { RateLimitExceededException } from './rate-limit-exceeded.exception.js';
import { RESOLVED_RATE_LIMIT_OPTIONS } from './rate-limit.providers.js';
import { RateLimitRoutes } from './rate-limit-routes.js';
import { RATE_LIMIT_HEADERS, type RequestWithRateLimit } from './rate-limit.request-state.js';
import { isPromiseLike, RateLimiter } from './rate-limiter.service.js';
import type { ResolvedModuleOptions } from './resolve-module-options.js';
import type { ConsumeResult, RateLimitCheck, TokenBucketLimit } from './store/rate-limit-store.interface.js';

/** A limit's bucket as it is now (adaptive limits move), named for the headers. */
type EffectiveLimit = HeaderLimit & TokenBucketLimit;

/** What {@link RateLimitGuard.throwRateLimitException} is told about a denial. */
export interface RateLimitDenial extends HeaderSource {
  /** Seconds until the request could succeed; `undefined` when it never can. */
  readonly retryAfter: number | undefined;
}

/**
 * Enforces the limits of every route (registered as `APP_GUARD` unless the
 * module is imported with `global: false`).
 *
 * Per request: look up the route's precompiled limits, build one check per
 * limit, ask the store once for all of them (all-or-nothing), then write the
 * headers, or leave them to `RateLimitInterceptor` where it is bound. When the
 * store answers synchronously (memory), no promise is created.
 *
 * Extension points, for subclasses: {@link getRequestResponse},
 * {@link throwRateLimitException}, {@link onStoreFailure}.
 *
 * @publicApi
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  /** Per route with adaptive limits: the provider's buckets last seen, and the limits built from them. */
  private readonly adaptiveBuckets = new WeakMap<CompiledRoute, { sources: readonly BucketLimit[]; limits: readonly EffectiveLimit[] }>();

  constructor(
    private readonly routes: RateLimitRoutes,
    private readonly limiter: RateLimiter,
    private readonly adaptive: AdaptiveRateProvider,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routes.forContext(context);
    const { limits } = route;
    if (limits.length === 0) return true;

    const { request, response } = this.getRequestResponse(context);
    const buckets = route.staticPolicy === undefined ? this.effectiveLimits(route) : limits;
    const checks: RateLimitCheck[] = new Array(limits.length);
    for (let i = 0; i < limits.length; i++) {
      const limit = limits[i]!;
      const bucket = buckets[i]!;
      checks[i] = {
        key: limit.namespace + limit.identify(context, request),
        limit: bucket,
        cost: typeof limit.cost === 'number' ? limit.cost : dynamicCost(limit, context),
      };
    }

    let answer: ConsumeResult | Promise<ConsumeResult>;
    try {
      answer = this.limiter.evaluate({ checks, now: this.clock.now() }, route.failMode);
    } catch (error) {
      return this.onStoreFailure(context, route, error);
    }
    if (isPromiseLike(answer)) {
      return answer.then(
        (result) => this.decide(context, route, buckets, result, request, response),
        (error: unknown) => this.onStoreFailure(context, route, error),
      );
    }
    return this.decide(context, route, buckets, answer, request, response);
  }

  /** The request (for keys) and response (for headers) of the current context. */
  protected getRequestResponse(context: ExecutionContext): RequestResponse {
    return requestResponseOf(context);
  }

  /**
   * Called when a request is over a limit, after the headers are written.
   * Override to change the error (the default is {@link RateLimitExceededException}).
   */
  protected throwRateLimitException(_context: ExecutionContext, denial: RateLimitDenial): never {
    throw new RateLimitExceededException(
      denial.retryAfter,
      denial.decisions,
      denial.retryAfter === undefined ? 'Request cost exceeds the rate limit burst' : 'Too Many Requests',
    );
  }

  /**
   * The store failed (already logged once per burst by `RateLimiter`):
   * `failMode: 'closed'` answers 503; `'open'` admits, and so does `'local'`
   * (the store had its chance to decide locally, and could not either).
   */
  protected onStoreFailure(_context: ExecutionContext, route: CompiledRoute, _error: unknown): boolean {
    if (route.failMode !== 'closed') return true;
    throw new ServiceUnavailableException('Rate limiting is temporarily unavailable');
  }

  private decide(
    context: ExecutionContext,
    route: CompiledRoute,
    limits: readonly HeaderLimit[],
    result: ConsumeResult,
    request: RequestLike | undefined,
    response: unknown,
  ): boolean {
    const source: HeaderSource = { limits, decisions: result.decisions, policy: route.staticPolicy };
    if (!result.allowed) {
      const retryAfter = retryAfterSeconds(result.decisions);
      if (response !== undefined && this.adapterHost.httpAdapter) {
        writeRateLimitHeaders(this.adapterHost.httpAdapter, response, this.options.headers, source);
        if (retryAfter !== undefined) this.adapterHost.httpAdapter.setHeader(response, 'Retry-After', String(retryAfter));
      }
      return this.throwRateLimitException(context, { ...source, retryAfter });
    }
    if (response === undefined || !this.adapterHost.httpAdapter) return true;
    if (route.interceptorBound && request) (request as RequestWithRateLimit)[RATE_LIMIT_HEADERS] = source;
    else writeRateLimitHeaders(this.adapterHost.httpAdapter, response, this.options.headers, source);
    return true;
  }

  /**
   * The buckets of a route with adaptive limits, as they are now. The
   * provider returns the same bucket object until a rate changes, so the
   * array built from them is reused until then.
   */
  private effectiveLimits(route: CompiledRoute): readonly EffectiveLimit[] {
    const cached = this.adaptiveBuckets.get(route);
    if (cached && route.limits.every((limit, i) => !limit.adaptive || this.adaptive.effectiveLimit(limit.name) === cached.sources[i])) {
      return cached.limits;
    }
    const sources = route.limits.map((limit) => (limit.adaptive ? this.adaptive.effectiveLimit(limit.name) : limit));
    const limits = route.limits.map((limit, i): EffectiveLimit =>
      limit.adaptive ? { name: limit.name, algorithm: 'token-bucket', rate: sources[i]!.rate, burst: sources[i]!.burst } : limit,
    );
    this.adaptiveBuckets.set(route, { sources, limits });
    return limits;
  }
}

/** A cost above the burst is left to the algorithm: denied with a reason, without `Retry-After`. */
function dynamicCost(limit: ResolvedLimit, context: ExecutionContext): number {
  const cost = (limit.cost as (context: ExecutionContext) => number)(context);
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost <= 0) {
    throw new TypeError(`RateLimit: limit "${limit.name}": the cost function returned ${String(cost)}; it must return a positive number`);
  }
  return cost;
}
