import { optionError } from '../../errors/option-error.js';
import { prometheusName, STORE_DURATION_BUCKETS, type InstrumentSpec } from './instruments.js';
import type {
  HistogramSeries,
  MetricAttributes,
  MetricsBackend,
  Observation,
} from './metrics-backend.js';
import type { PrometheusRegistryLike } from '../../interfaces/metrics-options.interface.js';
import { loadPeer } from './load-peer.js';

/** What a collected metric sets its values through (prom-client's `this` in `collect`). */
interface Collecting {
  reset(): void;
  set?(labels: MetricAttributes, value: number): void;
  inc?(labels: MetricAttributes, value: number): void;
}

/**
 * Instruments registered on the user's prom-client registry, with
 * Prometheus names (`rate_limiting_requests_total`, `…_seconds`). Values are
 * read from the subscriber when the registry is scraped (`collect`), never
 * written per request. A name the registry already holds fails the bootstrap
 * (two modules on one registry); `close()` removes this exporter's metrics so
 * the registry can be reused.
 */
export async function prometheusBackend(
  registry: PrometheusRegistryLike,
  prefix: string,
): Promise<MetricsBackend> {
  const client = await loadPeer('metrics.prometheus', 'prom-client', () => import('prom-client'));
  const registered: string[] = [];
  const claim = (
    spec: InstrumentSpec,
  ): { name: string; help: string; labelNames: string[]; registers: never[] } => {
    const name = prometheusName(spec, prefix);
    if (registry.getSingleMetric(name) !== undefined) {
      throw optionError(
        'RateLimitModule',
        'metrics.prometheus.registry',
        `already has a metric named ${name}: is a second RateLimitModule using this registry? Give each its own registry or a distinct metrics.prometheus.prefix`,
      );
    }
    registered.push(name);
    return {
      name,
      help: `${spec.description} (${spec.unit})`,
      labelNames: [...spec.attributes],
      registers: [registry as never],
    };
  };
  return {
    observe(spec: InstrumentSpec, read: () => Iterable<Observation>): void {
      const isCounter = spec.kind === 'counter' || spec.kind === 'observable-counter';
      const options = {
        ...claim(spec),
        collect(this: Collecting) {
          this.reset();
          for (const { value, attributes } of read()) {
            if (isCounter) this.inc!(attributes, value);
            else this.set!(attributes, value);
          }
        },
      };
      if (isCounter) new client.Counter(options);
      else new client.Gauge(options);
    },
    histogram(spec: InstrumentSpec, read: () => Iterable<HistogramSeries>): undefined {
      const { name, help } = claim(spec);
      registry.registerMetric(collectedHistogram(name, help, read) as never);
      return undefined;
    },
    close(): void {
      for (const name of registered.splice(0)) registry.removeSingleMetric(name);
    },
  };
}

/**
 * A histogram prom-client's registry serialises like its own (`get()` in its
 * format: `_bucket` with `le`, `_sum`, `_count`), whose buckets are the
 * subscriber's: prom-client's `Histogram` cannot be given counts, only values.
 */
function collectedHistogram(name: string, help: string, read: () => Iterable<HistogramSeries>) {
  const bounds = [...STORE_DURATION_BUCKETS.map(String), '+Inf'];
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    reset(): void {},
    get() {
      const values: {
        labels: Record<string, string | number>;
        value: number;
        metricName: string;
      }[] = [];
      for (const series of read()) {
        series.buckets.forEach((value, i) =>
          values.push({
            labels: { ...series.attributes, le: bounds[i]! },
            value,
            metricName: `${name}_bucket`,
          }),
        );
        values.push({
          labels: { ...series.attributes },
          value: series.sum,
          metricName: `${name}_sum`,
        });
        values.push({
          labels: { ...series.attributes },
          value: series.count,
          metricName: `${name}_count`,
        });
      }
      return Promise.resolve({ name, help, type: 'histogram', values, aggregator: 'sum' });
    },
  };
}
