import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { AdaptiveRateProvider } from './adaptive/adaptive-rate.provider.js';
import {
  ConfigurableRateLimitModule,
  RATE_LIMIT_ASYNC_OPTIONS_TYPE,
  RATE_LIMIT_OPTIONS_TYPE,
} from './rate-limit.module-definition.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RateLimitInterceptor } from './rate-limit.interceptor.js';
import { clockProvider, resolvedOptionsProvider, storeProvider } from './rate-limit.providers.js';
import { RateLimitRoutes } from './rate-limit-routes.js';
import { RateLimiter } from './rate-limiter.service.js';

/** Everything the guard and the interceptor need, wherever they are bound. */
const SHARED_PROVIDERS: Provider[] = [
  resolvedOptionsProvider,
  storeProvider,
  clockProvider,
  RateLimitRoutes,
  RateLimiter,
  AdaptiveRateProvider,
  RateLimitGuard,
  RateLimitInterceptor,
];

/**
 * Rate limiting for a Nest application.
 *
 * ```ts
 * RateLimitModule.forRoot({ defaults: { rate: '100/min', burst: 20 } })
 * ```
 *
 * The module is global (its services are injectable everywhere) and, unless
 * imported with `global: false`, registers {@link RateLimitGuard} as an
 * `APP_GUARD`. The store is closed when the application shuts down.
 *
 * @publicApi
 */
@Module({})
export class RateLimitModule extends ConfigurableRateLimitModule {
  static override forRoot(options: typeof RATE_LIMIT_OPTIONS_TYPE = {}): DynamicModule {
    return RateLimitModule.complete(super.forRoot(options), options.global);
  }

  static override forRootAsync(options: typeof RATE_LIMIT_ASYNC_OPTIONS_TYPE): DynamicModule {
    return RateLimitModule.complete(super.forRootAsync(options), options.global);
  }

  private static complete(definition: DynamicModule, global = true): DynamicModule {
    const guard: Provider[] = global ? [{ provide: APP_GUARD, useExisting: RateLimitGuard }] : [];
    return {
      ...definition,
      global: true,
      imports: [...(definition.imports ?? []), DiscoveryModule],
      providers: [...(definition.providers ?? []), ...SHARED_PROVIDERS, ...guard],
      exports: [...(definition.exports ?? []), ...SHARED_PROVIDERS],
    };
  }
}
