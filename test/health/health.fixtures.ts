import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import {
  ManualClock,
  RateLimit,
  RateLimitModule,
  SkipRateLimit,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import { RateLimitHealthIndicator, RateLimitHealthModule } from 'nestjs-holdup/terminus';
import { createApp, type Platform } from '../utils/create-app.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';

/** A health endpoint as terminus' documentation writes one, with the rate limiter's indicator. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly rateLimit: RateLimitHealthIndicator,
  ) {}

  @SkipRateLimit()
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([
      () => this.rateLimit.isHealthy('rate-limit', { timeoutMs: ANSWERED_DEADLINE_MS }),
    ]);
  }
}

/** A limited route, whose requests make a two-tier store fall back. */
@Controller('limited')
export class LimitedController {
  @RateLimit({ rate: '1/min', burst: 4 })
  @Get()
  get(): string {
    return 'ok';
  }
}

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), RateLimitHealthModule],
  controllers: [HealthController],
})
export class HealthModule {}

/** An application with RateLimitModule (these options) and the health module. */
export function healthApp(
  platform: Platform,
  options: RateLimitModuleOptions,
): Promise<INestApplication> {
  return createApp(platform, {
    imports: [
      RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000), ...options }),
      HealthModule,
    ],
    controllers: [LimitedController],
  });
}
