import type { Attributes, Meter, MeterProvider, ObservableResult } from '@opentelemetry/api';
import { attributeKey, STORE_DURATION_BUCKETS, type InstrumentSpec } from './instruments.js';
import type {
  MetricAttributes,
  MetricsBackend,
  Observation,
  MetricRecord,
} from './metrics-backend.js';
import type { MeterProviderLike } from '../../interfaces/metrics-options.interface.js';
import { loadPeer } from './load-peer.js';

/** The meter's name and its instrumentation scope. */
const METER_NAME = 'nestjs-holdup';

/**
 * Instruments on an OpenTelemetry meter: the given provider, or the global
 * one (`@opentelemetry/api`'s no-op until an SDK registers one). Counts are
 * reported by observable instruments, read when the SDK's reader collects:
 * the SDK's synchronous `add()` hashes the attributes on every call, which
 * costs more than the guard's whole decision (docs/observability.md).
 */
export async function openTelemetryBackend(
  meterProvider: MeterProviderLike | undefined,
): Promise<MetricsBackend> {
  const api = await loadPeer(
    'metrics.openTelemetry',
    '@opentelemetry/api',
    () => import('@opentelemetry/api'),
  );
  const provider = (meterProvider ?? api.metrics.getMeterProvider()) as MeterProvider;
  const meter: Meter = provider.getMeter(METER_NAME);
  const detach: (() => void)[] = [];
  return {
    observe(spec: InstrumentSpec, read: () => Iterable<Observation>): void {
      const options = { unit: spec.unit, description: spec.description };
      const isCounter = spec.kind === 'counter' || spec.kind === 'observable-counter';
      const observable = isCounter
        ? meter.createObservableCounter(spec.name, options)
        : meter.createObservableGauge(spec.name, options);
      const callback = (result: ObservableResult) => {
        for (const { value, attributes } of read())
          result.observe(value, otelAttributes(attributes));
      };
      observable.addCallback(callback);
      detach.push(() => observable.removeCallback(callback));
    },
    histogram(spec: InstrumentSpec): MetricRecord {
      // No asynchronous histogram in OpenTelemetry: each value is recorded as
      // it comes (only store calls that waited for a promise are timed).
      const histogram = meter.createHistogram(spec.name, {
        unit: spec.unit,
        description: spec.description,
        advice: { explicitBucketBoundaries: STORE_DURATION_BUCKETS },
      });
      return (value, attributes) => histogram.record(value, otelAttributes(attributes));
    },
    close(): void {
      for (const remove of detach.splice(0)) remove();
    },
  };
}

/** Namespaced attributes, built once per attribute object (the subscriber reuses its objects). */
const converted = new WeakMap<MetricAttributes, Attributes>();

function otelAttributes(attributes: MetricAttributes): Attributes {
  let result = converted.get(attributes);
  if (result === undefined) {
    result = {};
    for (const key in attributes) result[attributeKey(key)] = attributes[key];
    converted.set(attributes, result);
  }
  return result;
}
