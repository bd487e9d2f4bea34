import type { InstrumentSpec } from './instruments.js';

/** Attribute values of one measurement, by attribute key without the namespace. */
export type MetricAttributes = Readonly<Record<string, string>>;

/** One value an observable instrument reports at collection time. */
export interface Observation {
  readonly value: number;
  readonly attributes: MetricAttributes;
}

/** Adds to a counter or records a histogram value. */
export type MetricRecord = (value: number, attributes: MetricAttributes) => void;

/**
 * What an exporter provides: synchronous instruments the subscriber calls per
 * event, and observable ones it reads only when the exporter collects.
 */
export interface MetricsBackend {
  /** A counter or histogram. */
  instrument(spec: InstrumentSpec): MetricRecord;
  /** An observable gauge or counter, read at collection time. */
  observe(spec: InstrumentSpec, read: () => Iterable<Observation>): void;
  /** Detaches what can be detached (observable callbacks); instruments stay registered. */
  close(): void;
}
