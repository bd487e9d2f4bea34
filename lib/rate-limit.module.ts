import { Logger, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { AdaptiveRateProvider } from './adaptive/adaptive-rate.provider.js';
import {
  bindsGlobally,
  checkAsyncOptions,
  type RateLimitModuleExtras,
  ConfigurableRateLimitModule,
  RATE_LIMIT_ASYNC_OPTIONS_TYPE,
  RATE_LIMIT_OPTIONS_TYPE,
} from './rate-limit.module-definition.js';
import { RateLimitMessageHandlerGuards } from './routes/message-handler-guards.js';
import { RateLimitExceptionFilter } from './rate-limit-exception.filter.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RateLimitInterceptor } from './rate-limit.interceptor.js';
import {
  clockProvider,
  ownerProvider,
  resolvedOptionsProvider,
  storeProvider,
} from './rate-limit.providers.js';
import { RESOLVED_RATE_LIMIT_OPTIONS } from './rate-limit.constants.js';
import { RateLimiter } from './rate-limiter.service.js';
import { RateLimitEngine } from './engine/rate-limit-engine.js';
import { SlotGate } from './concurrency/slot-gate.js';
import { AdaptiveConcurrencyLimits } from './concurrency/adaptive/adaptive-concurrency-limits.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';
import type { RateLimitOptions } from './interfaces/rate-limit-options.interface.js';
import { needsAfterHandler } from './routes/after-handler.js';
import { RateLimitGuardCoverage } from './routes/guard-coverage.js';
import { RateLimitRoutes } from './routes/rate-limit-routes.js';
import { RateLimitTransports } from './transports/rate-limit-transports.js';
import { RateLimitMetricsExporter } from './observability/metrics/rate-limit-metrics.exporter.js';
import { RateLimitEvents } from './observability/events/rate-limit-events.js';

/** Everything the guard and the interceptor need, wherever they are bound. */
const SHARED_PROVIDERS: Provider[] = [
  resolvedOptionsProvider,
  storeProvider,
  clockProvider,
  ownerProvider,
  RateLimitTransports,
  RateLimitRoutes,
  RateLimitEngine,
  AdaptiveConcurrencyLimits,
  SlotGate,
  RateLimiter,
  AdaptiveRateProvider,
  RateLimitGuard,
  RateLimitInterceptor,
  RateLimitMetricsExporter,
  RateLimitEvents,
];

/**
 * `RateLimitInterceptor` as a global interceptor, only when the module's own
 * `limits` or `defaults` need work after the handler (adaptive ones): routes
 * that declare such limits get it from `@RateLimit()`, but module-wide limits
 * apply to routes nobody decorated. Otherwise the factory gives nothing,
 * which Nest skips, so no route pays for an interceptor it does not need.
 */
const moduleWideInterceptor: Provider = {
  provide: APP_INTERCEPTOR,
  useFactory: (options: ResolvedModuleOptions, interceptor: RateLimitInterceptor) =>
    needsAfterHandler([...options.limits, options.defaults]) ? interceptor : undefined,
  inject: [RESOLVED_RATE_LIMIT_OPTIONS, RateLimitInterceptor],
};

/**
 * Places the limits keyed by user after the route's own guards. A factory, so
 * that it runs while providers are instantiated: Nest reads each handler's
 * guards when it registers the routes, before any `onModuleInit` hook.
 */
const afterRouteGuardsBinding: Provider = {
  provide: 'RATE_LIMIT:AFTER_ROUTE_GUARDS',
  useFactory: (routes: RateLimitRoutes) => {
    routes.bindAfterRouteGuards();
    return true;
  },
  inject: [RateLimitRoutes],
};

/**
 * With `bindGlobally: false` the application binds the guard and the interceptor
 * itself; module-wide adaptive limits then adapt, limits that charge by
 * outcome give tokens back, and concurrency limits take slots, only where it
 * bound the interceptor. Said once at start-up rather than left to be discovered.
 */
const unboundInterceptorWarning: Provider = {
  provide: 'RATE_LIMIT:UNBOUND_INTERCEPTOR_WARNING',
  useFactory: (options: ResolvedModuleOptions) => {
    if (!needsAfterHandler([...options.limits, options.defaults])) return false;
    const declared = [...options.limits, options.defaults];
    new Logger('RateLimit').warn(
      hasConcurrency(declared) &&
        !needsAfterHandler(declared.filter((limit) => limit?.concurrency === undefined))
        ? 'RateLimitModule: bindGlobally is false and the module limits or defaults have concurrency limits: outside HTTP (GraphQL, WebSocket, ' +
            'microservices) their slots are only taken where you bind RateLimitInterceptor (e.g. as APP_INTERCEPTOR); elsewhere they do not limit at all'
        : 'RateLimitModule: bindGlobally is false and the module limits or defaults are adaptive or charge by outcome: their outcomes are only ' +
            'handled where you bind RateLimitInterceptor (e.g. as APP_INTERCEPTOR); elsewhere an adaptive rate never adapts and ' +
            "charge: 'failures' / 'successes' counts every request" +
            (hasConcurrency(declared)
              ? '; concurrency limits outside HTTP take no slot there'
              : ''),
    );
    return true;
  },
  inject: [RESOLVED_RATE_LIMIT_OPTIONS],
};

/**
 * The deprecated `global` extra, noted while providers are instantiated: said
 * at start-up with the limits' deprecated names (`RateLimitRoutes.onModuleInit`).
 */
function deprecatedGlobalNotice(where: string): Provider {
  return {
    provide: 'RATE_LIMIT:DEPRECATED_GLOBAL',
    useFactory: (options: ResolvedModuleOptions) => {
      options.deprecations.note('global', 'bindGlobally', where);
      return true;
    },
    inject: [RESOLVED_RATE_LIMIT_OPTIONS],
  };
}

/** Some of `limits` are concurrency limits. */
function hasConcurrency(limits: readonly (RateLimitOptions | undefined)[]): boolean {
  return limits.some((limit) => limit?.concurrency !== undefined);
}

/**
 * Rate limiting for a Nest application.
 *
 * ```ts
 * RateLimitModule.forRoot({ defaults: { rate: '100/min', burst: 20 } })
 * ```
 *
 * The module is global (its services are injectable everywhere) and, unless
 * imported with `bindGlobally: false`, registers {@link RateLimitGuard} as an
 * `APP_GUARD` (and {@link RateLimitInterceptor} as an `APP_INTERCEPTOR` when
 * module-wide limits need it). The store is closed when the application shuts down.
 *
 * @publicApi
 */
@Module({})
export class RateLimitModule extends ConfigurableRateLimitModule {
  static override forRoot(options: typeof RATE_LIMIT_OPTIONS_TYPE = {}): DynamicModule {
    return RateLimitModule.complete(super.forRoot(options), options, 'RateLimitModule.forRoot');
  }

  static override forRootAsync(options: typeof RATE_LIMIT_ASYNC_OPTIONS_TYPE): DynamicModule {
    checkAsyncOptions(options);
    return RateLimitModule.complete(
      super.forRootAsync(options),
      options,
      'RateLimitModule.forRootAsync',
    );
  }

  private static complete(
    definition: DynamicModule,
    extras: RateLimitModuleExtras,
    where: string,
  ): DynamicModule {
    const bind = bindsGlobally(extras, where);
    const deprecated: Provider[] =
      extras.global === undefined ? [] : [deprecatedGlobalNotice(`${where}({ global })`)];
    const guard: Provider[] = bind
      ? [
          { provide: APP_GUARD, useExisting: RateLimitGuard },
          moduleWideInterceptor,
          RateLimitMessageHandlerGuards,
        ]
      : [unboundInterceptorWarning, RateLimitGuardCoverage];
    return {
      ...definition,
      global: true,
      imports: [...(definition.imports ?? []), DiscoveryModule],
      // The filter whatever `bindGlobally` says: it only shapes RateLimitExceededException responses.
      providers: [
        ...(definition.providers ?? []),
        ...SHARED_PROVIDERS,
        afterRouteGuardsBinding,
        { provide: APP_FILTER, useClass: RateLimitExceptionFilter },
        ...guard,
        ...deprecated,
      ],
      exports: [...(definition.exports ?? []), ...SHARED_PROVIDERS],
    };
  }
}
