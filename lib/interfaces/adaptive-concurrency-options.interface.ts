import type { ExecutionContext } from '@nestjs/common';

/**
 * The adaptive form of a limit's `concurrency`: the calls allowed in flight
 * per key move between `min` and `max` from what the calls measure (latency
 * against the best recent latency, in-flight count, failures). Counted in
 * each process (each instance protects its own share of the downstream),
 * never in the store. See docs/concurrency.md.
 *
 * ```ts
 * @RateLimit({ name: 'inference', key: 'global', concurrency: {
 *   adaptive: { min: 2, max: 200 },
 *   partitions: { critical: 0.9, batch: 0.1 }, partition: (ctx) => tierOf(ctx),
 *   backlog: { size: 100, timeout: '1s' },
 * } })
 * ```
 *
 * @publicApi
 */
export interface AdaptiveConcurrencyOptions {
  readonly adaptive: AdaptiveConcurrencyLimitOptions;
  /**
   * Priorities: shares of the limit (each in (0, 1], adding up to at most 1),
   * in priority order. Each partition is guaranteed its share; a partition
   * beyond it borrows what the others leave unused (a partition without a
   * caller for a second lends its share). Needs `partition`.
   */
  readonly partitions?: Readonly<Record<string, number>>;
  /** The call's partition: one of the names of `partitions` (another name: the last partition, said once in the log). */
  readonly partition?: (context: ExecutionContext) => string;
  /**
   * A short queue instead of an instant 429: up to `size` callers per key
   * wait up to `timeout` (milliseconds or `'1s'`) for a slot, newest first;
   * refused with `Retry-After` when it is full or the wait runs out. A
   * caller that leaves while waiting leaves the queue and takes nothing.
   */
  readonly backlog?: { readonly size: number; readonly timeout: number | string };
}

/** The controller's bounds and parameters. @publicApi */
export interface AdaptiveConcurrencyLimitOptions {
  /** The limit never goes below this (a positive integer). */
  readonly min: number;
  /** The limit never goes above this. */
  readonly max: number;
  /** Where it starts. @default 10, within [min, max] */
  readonly initial?: number;
  /** The controller: `'gradient'` (Gradient2's gradient with Vegas's queue term, the only one). @default 'gradient' */
  readonly algorithm?: 'gradient';
  /** Latency over the no-load latency tolerated before the limit shrinks (from 1 to 10). @default 1.1 */
  readonly tolerance?: number;
  /** How often the no-load latency is re-measured while the limit is in use (at least a second). @default '30s' */
  readonly probeInterval?: number | string;
}
