import { Controller, Get } from '@nestjs/common';
import {
  MetricReader,
  MeterProvider,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { RateLimit } from 'nestjs-holdup';

/** A route limited to a burst of 3, refilling once a second, for everybody. */
@Controller('metered')
export class MeteredController {
  @RateLimit({ name: 'metered', rate: 1, burst: 3, key: 'global' })
  @Get()
  get(): string {
    return 'ok';
  }
}

/**
 * A route with a shadow limit that would deny after one request, and a limit
 * skipped for callers sending `x-internal: 1`.
 */
@Controller('policies')
export class PolicyMeteredController {
  @RateLimit({ name: 'trial', rate: 1, burst: 1, key: 'global', shadow: true })
  @RateLimit({
    name: 'partners',
    rate: 1,
    burst: 100,
    key: 'global',
    skip: (ctx) =>
      ctx.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-internal'] ===
      '1',
  })
  @Get()
  get(): string {
    return 'ok';
  }
}

/** A reader the test collects from on demand (no timer). */
class OnDemandReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }

  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** An OpenTelemetry SDK meter provider and a way to read one instrument's points. */
export function openTelemetrySdk(): {
  provider: MeterProvider;
  points(name: string): Promise<DataPoint<unknown>[]>;
} {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    async points(name) {
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === name);
      return (metric?.dataPoints ?? []) as DataPoint<unknown>[];
    },
  };
}

/** The value of the point whose attributes include `attributes` (0 when none). */
export function pointValue(
  points: readonly DataPoint<unknown>[],
  attributes: Record<string, string>,
): number {
  const point = points.find((p) =>
    Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
  );
  return point === undefined ? 0 : (point.value as number);
}

/** The count of a histogram point whose attributes include `attributes`. */
export function histogramCount(
  points: readonly DataPoint<unknown>[],
  attributes: Record<string, string>,
): number {
  const point = points.find((p) =>
    Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
  );
  return point === undefined ? 0 : (point.value as Histogram).count;
}
