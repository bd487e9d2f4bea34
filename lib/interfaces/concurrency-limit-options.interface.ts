import type { AdaptiveConcurrencyOptions } from './adaptive-concurrency-options.interface.js';
import type { BaseLimitOptions } from './limit-base-options.interface.js';

/**
 * A concurrency limit instead of a rate limit: at most `concurrency`
 * requests of one key in flight at once. Takes only `name`, `key`, `scope`,
 * `failMode`, `shadow: false` and `leaseTimeout`; declare a rate limit
 * beside it for a rate. See docs/concurrency.md.
 *
 * ```ts
 * @RateLimit([{ name: 'rate', rate: '10/s' }, { name: 'inflight', concurrency: 4 }])
 * ```
 *
 * @publicApi
 */
export interface ConcurrencyLimitOptions extends BaseLimitOptions {
  /**
   * Makes this a concurrency limit instead of a rate limit: at most this many
   * requests of one key in flight at once (a positive integer). A slot is
   * taken when the request is admitted and given back when its handler
   * completes, throws, or its stream ends (or is torn down): a client that
   * goes away does not free the slot of a handler still running. Takes
   * only `name`, `key`, `scope`, `failMode`, `shadow: false` and
   * `leaseTimeout`; declare a rate limit beside it for a rate. See
   * docs/concurrency.md.
   *
   * Or the adaptive form, `{ adaptive: { min, max }, partitions?, partition?,
   * backlog? }`: a limit that finds the downstream's capacity from the calls'
   * latency, counted in each process ({@link AdaptiveConcurrencyOptions}).
   */
  readonly concurrency: number | AdaptiveConcurrencyOptions;
  /**
   * A `concurrency` limit's slot held longer than this (milliseconds, or
   * `'30s'`, `'5min'`...) is taken back by the store: what a process that
   * crashed while holding slots leaves behind. Longer than your slowest
   * request (a stream included), or its slot is reclaimed while it runs.
   * @default '5min'
   */
  readonly leaseTimeout?: number | string;
  /**
   * In-flight requests are not a decision that can be replayed without
   * effect: no shadow mode. `false` only, to opt out of the module's `shadow`.
   */
  readonly shadow?: false;
  /** Not on a concurrency limit: declare a second limit (another name) for the rate. */
  readonly rate?: never;
  /** Not on a concurrency limit: it has no bucket. */
  readonly burst?: never;
  /** Not on a concurrency limit: it counts requests in flight, not per window. */
  readonly algorithm?: never;
  /** Not on a concurrency limit: it has no window. */
  readonly calendar?: never;
  /** Not on a concurrency limit: a request holds one slot. */
  readonly cost?: never;
  /** Not on a concurrency limit: it has no rate to adapt. */
  readonly adaptive?: never;
  /** Not on a concurrency limit: a slot is always given back when the request ends. */
  readonly charge?: never;
  /** Not on a concurrency limit: a slot is always given back when the request ends. */
  readonly isChargeFailure?: never;
  /** Not on a concurrency limit (and deprecated: `isChargeFailure`). */
  readonly isFailure?: never;
  /** Not on a concurrency limit: use `@SkipRateLimit(name)` on the routes it should not apply to. */
  readonly skip?: never;
  /** Not on a concurrency limit: it frees a slot as soon as a request ends. */
  readonly blockDuration?: never;
  /** Not on a concurrency limit: it refuses at once rather than queueing. */
  readonly maxDelay?: never;
  /** Not on a concurrency limit: a request holds one slot, whatever it costs. */
  readonly settle?: never;
}
