import { describeValue, optionError } from '../../errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../../errors/unknown-options.js';
import type {
  RateLimitMetricsOptions,
  ResolvedMetricsOptions,
} from '../../interfaces/metrics-options.interface.js';

const METRICS_OPTIONS = optionNames<RateLimitMetricsOptions>({
  openTelemetry: true,
  prometheus: true,
});
const PROMETHEUS_OPTIONS = optionNames<NonNullable<RateLimitMetricsOptions['prometheus']>>({
  registry: true,
  prefix: true,
});
const PROMETHEUS_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Validates `metrics` at start-up; `undefined` when no exporter is configured (nothing subscribes). */
export function resolveMetricsOptions(
  metrics: RateLimitMetricsOptions | undefined,
): ResolvedMetricsOptions | undefined {
  if (metrics === undefined) return undefined;
  const fail = (option: string, problem: string): never => {
    throw optionError('RateLimitModule', option, problem);
  };
  if (metrics === null || typeof metrics !== 'object')
    fail('metrics', `must be an object, got ${describeValue(metrics)}`);
  rejectUnknownOptions('RateLimitModule', metrics, METRICS_OPTIONS, 'metrics.');
  const openTelemetry = resolveOpenTelemetry(metrics.openTelemetry, fail);
  let prometheus: ResolvedMetricsOptions['prometheus'];
  const given = metrics.prometheus;
  if (given !== undefined) {
    if (given === null || typeof given !== 'object')
      fail('metrics.prometheus', `must be { registry, prefix? }, got ${describeValue(given)}`);
    rejectUnknownOptions('RateLimitModule', given, PROMETHEUS_OPTIONS, 'metrics.prometheus.');
    const registry = given.registry as unknown as Record<string, unknown> | undefined;
    if (
      typeof registry?.registerMetric !== 'function' ||
      typeof registry.getSingleMetric !== 'function'
    ) {
      fail(
        'metrics.prometheus.registry',
        `must be a prom-client Registry (new Registry()), got ${describeValue(given.registry)}`,
      );
    }
    const prefix = given.prefix ?? '';
    if (typeof prefix !== 'string' || (prefix !== '' && !PROMETHEUS_NAME.test(prefix))) {
      fail(
        'metrics.prometheus.prefix',
        `must be a Prometheus name prefix (letters, digits, _ and :, not starting with a digit), got ${describeValue(prefix)}`,
      );
    }
    prometheus = { registry: given.registry, prefix };
  }
  if (openTelemetry === undefined && prometheus === undefined)
    fail('metrics', 'must configure openTelemetry or prometheus (omit metrics for none)');
  return { openTelemetry, prometheus };
}

function resolveOpenTelemetry(
  given: RateLimitMetricsOptions['openTelemetry'],
  fail: (option: string, problem: string) => never,
): ResolvedMetricsOptions['openTelemetry'] {
  if (given === undefined) return undefined;
  if (given === true) return { meterProvider: null };
  if (given === null || typeof given !== 'object')
    fail('metrics.openTelemetry', `must be true or { meterProvider }, got ${describeValue(given)}`);
  const meterProvider = given.meterProvider;
  if (
    meterProvider !== undefined &&
    typeof (meterProvider as { getMeter?: unknown } | null)?.getMeter !== 'function'
  ) {
    fail(
      'metrics.openTelemetry.meterProvider',
      `must be an OpenTelemetry MeterProvider (with getMeter()), got ${describeValue(meterProvider)}`,
    );
  }
  return { meterProvider: meterProvider ?? null };
}
