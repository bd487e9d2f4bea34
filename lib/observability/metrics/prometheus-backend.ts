import { optionError } from '../../errors/option-error.js';
import { prometheusName, STORE_DURATION_BUCKETS, type InstrumentSpec } from './instruments.js';
import type { MetricsBackend, Observation, MetricRecord } from './metrics-backend.js';
import type { PrometheusRegistryLike } from './metrics-options.interface.js';
import { loadPeer } from './load-peer.js';

/**
 * Instruments registered on the user's prom-client registry, with
 * Prometheus names (`rate_limiting_requests_total`, `…_seconds`). A name the
 * registry already holds fails the bootstrap (two modules on one registry);
 * `close()` removes this exporter's metrics so the registry can be reused.
 */
export async function prometheusBackend(registry: PrometheusRegistryLike, prefix: string): Promise<MetricsBackend> {
  const client = await loadPeer('metrics.prometheus', 'prom-client', () => import('prom-client'));
  const registered: string[] = [];
  const claim = (spec: InstrumentSpec): { name: string; help: string; labelNames: string[]; registers: never[] } => {
    const name = prometheusName(spec, prefix);
    if (registry.getSingleMetric(name) !== undefined) {
      throw optionError(
        'RateLimitModule',
        'metrics.prometheus.registry',
        `already has a metric named ${name}: is a second RateLimitModule using this registry? Give each its own registry or a distinct metrics.prometheus.prefix`,
      );
    }
    registered.push(name);
    return { name, help: `${spec.description} (${spec.unit})`, labelNames: [...spec.attributes], registers: [registry as never] };
  };
  return {
    instrument(spec: InstrumentSpec): MetricRecord {
      if (spec.kind === 'histogram') {
        const histogram = new client.Histogram({ ...claim(spec), buckets: STORE_DURATION_BUCKETS });
        const children = new WeakMap<object, { observe(value: number): void }>();
        return (value, labels) => {
          let child = children.get(labels);
          if (child === undefined) children.set(labels, (child = histogram.labels(labels)));
          child.observe(value);
        };
      }
      const counter = new client.Counter(claim(spec));
      // One child per attribute object (the subscriber reuses them): inc(labels)
      // would hash the labels on every call.
      const children = new WeakMap<object, { inc(value: number): void }>();
      return (value, labels) => {
        let child = children.get(labels);
        if (child === undefined) children.set(labels, (child = counter.labels(labels)));
        child.inc(value);
      };
    },
    observe(spec: InstrumentSpec, read: () => Iterable<Observation>): void {
      // A Gauge for both kinds: prom-client's Counter cannot be set, and the
      // `_total` name (from the spec's kind) tells Prometheus it only grows.
      new client.Gauge({
        ...claim(spec),
        collect(this: { reset(): void; set(labels: Observation['attributes'], value: number): void }) {
          this.reset();
          for (const { value, attributes } of read()) this.set(attributes, value);
        },
      });
    },
    close(): void {
      for (const name of registered.splice(0)) registry.removeSingleMetric(name);
    },
  };
}
