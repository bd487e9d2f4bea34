import { STORE_DURATION_BUCKETS } from './instruments.js';
import type { HistogramSeries, MetricAttributes } from './metrics-backend.js';

/**
 * Store call durations counted in fixed buckets where they happen, read when
 * an exporter collects: prom-client's `observe()` costs more than a store
 * call it would time. A handful of series (a store kind × success or failure).
 */
export class DurationHistogram {
  private readonly series: {
    readonly attributes: MetricAttributes;
    readonly counts: Float64Array;
    sum: number;
  }[] = [];

  /** A series for these attributes (reused: record with its index). */
  define(attributes: MetricAttributes): number {
    this.series.push({
      attributes,
      counts: new Float64Array(STORE_DURATION_BUCKETS.length + 1),
      sum: 0,
    });
    return this.series.length - 1;
  }

  record(series: number, seconds: number): void {
    const entry = this.series[series]!;
    let bucket = 0;
    while (bucket < STORE_DURATION_BUCKETS.length && seconds > STORE_DURATION_BUCKETS[bucket]!)
      bucket++;
    entry.counts[bucket]! += 1;
    entry.sum += seconds;
  }

  /** Every series observed at least once. */
  *read(): Iterable<HistogramSeries> {
    for (const { attributes, counts, sum } of this.series) {
      let count = 0;
      const buckets = Array.from(counts, (n) => (count += n));
      if (count > 0) yield { attributes, buckets, count, sum };
    }
  }
}
