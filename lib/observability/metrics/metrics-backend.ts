import type { InstrumentSpec } from './instruments.js';

/** Attribute values of one measurement, by attribute key without the namespace. */
export type MetricAttributes = Readonly<Record<string, string>>;

/** One value an observable instrument reports at collection time. */
export interface Observation {
  readonly value: number;
  readonly attributes: MetricAttributes;
}

/** One series of a `DurationHistogram` as exporters read it: cumulative, like Prometheus' buckets. */
export interface HistogramSeries {
  readonly attributes: MetricAttributes;
  /** Observations at most each of `STORE_DURATION_BUCKETS`, cumulative, then +Inf. */
  readonly buckets: readonly number[];
  readonly count: number;
  readonly sum: number;
}

/** Records one histogram value. */
export type MetricRecord = (value: number, attributes: MetricAttributes) => void;

/**
 * What an exporter provides. Everything the request path counts is kept by
 * the subscriber and read when the exporter collects, so that a decision
 * never pays an exporter's own bookkeeping (attribute hashing, label lookup).
 */
export interface MetricsBackend {
  /**
   * A counter (`counter`, `observable-counter`: cumulative totals) or a gauge
   * (`observable-gauge`), whose values `read` gives at collection time.
   */
  observe(spec: InstrumentSpec, read: () => Iterable<Observation>): void;
  /**
   * A histogram. A backend that reads buckets at collection time reads them
   * from `read` and answers `undefined`; one that cannot (OpenTelemetry has no
   * asynchronous histogram) answers the function to call with each value.
   */
  histogram(spec: InstrumentSpec, read: () => Iterable<HistogramSeries>): MetricRecord | undefined;
  /** Detaches what can be detached (observable callbacks, registered metrics). */
  close(): void;
}
