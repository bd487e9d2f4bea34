import type { Attributes, Meter, MeterProvider } from '@opentelemetry/api';
import { attributeKey, STORE_DURATION_BUCKETS, type InstrumentSpec } from './instruments.js';
import type { MetricAttributes, MetricsBackend, Observation, MetricRecord } from './metrics-backend.js';
import type { MeterProviderLike } from './metrics-options.interface.js';
import { loadPeer } from './load-peer.js';

/** The meter's name and its instrumentation scope. */
const METER_NAME = 'nestjs-holdup';

/**
 * Instruments on an OpenTelemetry meter: the given provider, or the global
 * one (`@opentelemetry/api`'s no-op until an SDK registers one).
 */
export async function openTelemetryBackend(meterProvider: MeterProviderLike | undefined): Promise<MetricsBackend> {
  const api = await loadPeer('metrics.openTelemetry', '@opentelemetry/api', () => import('@opentelemetry/api'));
  const provider = (meterProvider ?? api.metrics.getMeterProvider()) as MeterProvider;
  const meter: Meter = provider.getMeter(METER_NAME);
  const detach: (() => void)[] = [];
  return {
    instrument(spec: InstrumentSpec): MetricRecord {
      const options = { unit: spec.unit, description: spec.description };
      if (spec.kind === 'histogram') {
        const histogram = meter.createHistogram(spec.name, { ...options, advice: { explicitBucketBoundaries: STORE_DURATION_BUCKETS } });
        return (value, attributes) => histogram.record(value, otelAttributes(attributes));
      }
      // Counted here, reported when the reader collects: the SDK's add()
      // hashes the attributes on every call, which cost more than the guard
      // itself (docs/benchmarks.md); a map lookup on a reused attribute object
      // does not. Cumulative totals are what an observable counter reports.
      const totals = new Map<MetricAttributes, number>();
      const counter = meter.createObservableCounter(spec.name, options);
      const callback = (result: { observe(value: number, attributes?: Attributes): void }) => {
        for (const [attributes, value] of totals) result.observe(value, otelAttributes(attributes));
      };
      counter.addCallback(callback);
      detach.push(() => counter.removeCallback(callback));
      return (value, attributes) => totals.set(attributes, (totals.get(attributes) ?? 0) + value);
    },
    observe(spec: InstrumentSpec, read: () => Iterable<Observation>): void {
      const options = { unit: spec.unit, description: spec.description };
      const observable = spec.kind === 'observable-counter' ? meter.createObservableCounter(spec.name, options) : meter.createObservableGauge(spec.name, options);
      const callback = (result: { observe(value: number, attributes?: Attributes): void }) => {
        for (const { value, attributes } of read()) result.observe(value, otelAttributes(attributes));
      };
      observable.addCallback(callback);
      detach.push(() => observable.removeCallback(callback));
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
