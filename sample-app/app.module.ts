import { Module } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { APP_GUARD } from '@nestjs/core';
import { RateLimitGuard, RateLimitModule } from 'nestjs-holdup';
import { AccountController } from './account.controller.js';
import { HeaderAuthGuard } from './auth.guard.js';
import { CatalogController } from './catalog.controller.js';
import { HealthController } from './health.controller.js';
import { MetricsModule, PROMETHEUS_REGISTRY } from './metrics.module.js';
import { QuotesController } from './quotes.controller.js';
import { createStore } from './store.js';

@Module({
  imports: [
    MetricsModule,
    RateLimitModule.forRootAsync({
      // The guard is registered below, after authentication, so that
      // `key: 'user'` sees the user: global guards run in registration order.
      bindGlobally: false,
      imports: [MetricsModule],
      inject: [PROMETHEUS_REGISTRY],
      useFactory: async (registry: Registry) => {
        const store = await createStore();
        return {
          // The limiter's decisions, store latency and fallbacks, served on GET /metrics.
          metrics: { prometheus: { registry } },
          store,
          defaults: { rate: '60/min', burst: 10, key: 'ip' },
          // Two tier: keep limiting from a local share while Redis is away.
          failMode: store.localFallback ? 'local' : 'open',
          trustProxy: process.env.TRUST_PROXY === 'true',
        };
      },
    }),
  ],
  controllers: [CatalogController, AccountController, HealthController, QuotesController],
  providers: [
    { provide: APP_GUARD, useClass: HeaderAuthGuard },
    { provide: APP_GUARD, useExisting: RateLimitGuard },
  ],
})
export class AppModule {}
