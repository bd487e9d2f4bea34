import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { RateLimitHealthIndicator } from './rate-limit-health.indicator.js';

/**
 * Provides {@link RateLimitHealthIndicator}, as terminus' own indicators are
 * provided: import it (and `TerminusModule`, for `HealthCheckService`) in the
 * module of your health controller. It needs `RateLimitModule` in the
 * application (global: its store is found there).
 *
 * @publicApi
 */
@Module({
  imports: [TerminusModule],
  providers: [RateLimitHealthIndicator],
  exports: [RateLimitHealthIndicator],
})
export class RateLimitHealthModule {}
