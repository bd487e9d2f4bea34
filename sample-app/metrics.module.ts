import { Controller, Get, Header, Inject, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { SkipRateLimit } from 'nestjs-holdup';

/** The prom-client registry the rate limiter's metrics are registered on, and `/metrics` serves. */
export const PROMETHEUS_REGISTRY = Symbol('PROMETHEUS_REGISTRY');

/** What Prometheus scrapes: never rate limited. */
@SkipRateLimit()
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(PROMETHEUS_REGISTRY) private readonly registry: Registry) {}

  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * One registry per application (not prom-client's global one), so that two
 * instances of the app in one process (tests) never collide.
 */
@Module({
  providers: [{ provide: PROMETHEUS_REGISTRY, useFactory: () => new Registry() }],
  controllers: [MetricsController],
  exports: [PROMETHEUS_REGISTRY],
})
export class MetricsModule {}
