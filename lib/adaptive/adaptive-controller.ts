import type { BucketLimit } from '../algorithms/gcra.js';
import type { AdaptiveHandlerResult } from '../interfaces/adaptive-options.interface.js';
import type { AdaptiveOutcome } from './adaptive-outcome.js';
import { isBadOutcome } from './adaptive-outcome.js';
import type { AdaptiveRateListener } from './adaptive-rate-change.interface.js';
import { aimdNext, type AimdState } from './aimd.js';
import { effectiveBucket } from './effective-bucket.js';
import type { AdaptiveConfig } from './resolve-adaptive-options.js';

/** A window short of `minOutcomes` may grow to this many intervals before it is judged neutral. */
const MAX_WINDOW_INTERVALS = 10;

/**
 * Keys whose failures are counted one by one in a window (for `maxKeyShare`).
 * Beyond it, failures of keys not yet seen count in full: the memory stays
 * bounded, and the bound errs towards cutting, never towards ignoring an overload.
 */
export const MAX_TRACKED_KEYS = 4096;

/**
 * The adaptive state of one limit: counts outcomes per evaluation window and
 * moves the effective rate with {@link aimdNext} when a window closes.
 *
 * Framework-free and clock-free: every call takes `now` (milliseconds), and a
 * window is closed lazily by the first call at or after its end. Nothing runs
 * in between, so nothing keeps the process alive and a test drives it by
 * passing times. Windows sit on a fixed grid starting at the first call, so
 * they are whole multiples of `intervalMs` however sparse the calls are;
 * windows in which nothing was recorded are neutral and change nothing, and a
 * window with fewer than `minOutcomes` outcomes grows (up to
 * {@link MAX_WINDOW_INTERVALS} intervals) until it has enough to be judged.
 *
 * Time that goes backwards is treated as "still in the current window".
 *
 * @publicApi
 */
export class AdaptiveController {
  private state: AimdState;
  private limit: BucketLimit;
  private started = false;
  private windowStart = 0;
  /** `-Infinity` until the first call, so the hot-path test in {@link effective} needs no second branch. */
  private windowEnd = Number.NEGATIVE_INFINITY;
  private outcomes = 0;
  private failures = 0;
  /** Failures per key in the window, for `maxKeyShare` (keys reported with a failure only). */
  private readonly keyFailures = new Map<string, number>();
  /** The first key reported in the window, and whether another one was. */
  private firstKey: string | undefined = undefined;
  private severalKeys = false;
  private notifiedRate: number;
  /** When the last decrease took effect; outcomes of requests admitted before it are stale. */
  private lastCutAt = Number.NEGATIVE_INFINITY;

  /**
   * @param name the limit's name, carried in change events.
   * @param config from `resolveAdaptiveOptions`.
   * @param onChange called (synchronously, from whichever call closed the
   *   window) when the rate has moved by at least `notifyThreshold` since the
   *   last call. The state is already updated when it runs, so a listener that
   *   throws cannot corrupt it, but the error reaches the caller: wrap
   *   listeners that may throw (the Nest provider does).
   */
  constructor(
    readonly name: string,
    readonly config: AdaptiveConfig,
    private readonly onChange?: AdaptiveRateListener,
  ) {
    const declared = config.declared;
    this.state = { rate: declared.rate, healthyStreak: 0 };
    this.limit = declared;
    this.notifiedRate = declared.rate;
  }

  /**
   * Record one outcome at `now` (when the request finished). Outcomes with a
   * `latencyMs` whose request was admitted before the last decrease are
   * ignored. Throws a `TypeError` for a malformed outcome.
   *
   * @param key who the outcome is from (the bucket key the limit charged):
   *   one key's failures count for at most `maxKeyShare` of a window's
   *   outcomes. Without it, the outcome counts in full.
   */
  record(outcome: AdaptiveOutcome, now: number, key?: string): void {
    const bad = isBadOutcome(outcome, this.config.latencyTargetMs);
    this.count(bad, typeof outcome === 'object' ? outcome.latencyMs : undefined, now, key);
  }

  /**
   * Record what a handler's call came to (from `RateLimitInterceptor`): a
   * failure as the limit's `adaptive.isServerFailure` judges it (the transport's verdict,
   * `result.failed`, without one), a congestion signal when over
   * `latencyTargetMs`. An `isServerFailure` that throws is the caller's to handle:
   * nothing is recorded then.
   */
  recordResult(result: AdaptiveHandlerResult, now: number, key?: string): void {
    const isServerFailure = this.config.isServerFailure;
    const failed = isServerFailure === undefined ? result.failed : isServerFailure(result) === true;
    const latencyMs = result.latencyMs;
    const target = this.config.latencyTargetMs;
    this.count(failed || (target !== undefined && latencyMs > target), latencyMs, now, key);
  }

  private count(
    bad: boolean,
    latencyMs: number | undefined,
    now: number,
    key: string | undefined,
  ): void {
    if (now >= this.windowEnd) this.roll(now);
    if (latencyMs !== undefined && now - latencyMs < this.lastCutAt) return;
    this.outcomes += 1;
    if (key !== undefined && !this.severalKeys) {
      if (this.firstKey === undefined) this.firstKey = key;
      else if (key !== this.firstKey) this.severalKeys = true;
    }
    if (!bad) return;
    this.failures += 1;
    if (key === undefined) return;
    const seen = this.keyFailures.get(key);
    if (seen !== undefined) this.keyFailures.set(key, seen + 1);
    else if (this.keyFailures.size < MAX_TRACKED_KEYS) this.keyFailures.set(key, 1);
  }

  /**
   * The window's failures as they count: each key's beyond its share left
   * out, unless one key had every outcome of the window (nobody else to
   * protect: a `'global'` key, a single client).
   */
  private countedFailures(): number {
    let failures = this.failures;
    if (!this.severalKeys || this.config.maxKeyShare >= 1 || this.keyFailures.size === 0)
      return failures;
    const cap = Math.max(1, Math.floor(this.config.maxKeyShare * this.outcomes));
    for (const count of this.keyFailures.values()) if (count > cap) failures -= count - cap;
    return failures;
  }

  /**
   * The bucket to use at `now` (effective rate and burst). Returns the same
   * object until the rate changes: no allocation on the hot path.
   */
  effective(now: number): BucketLimit {
    if (now >= this.windowEnd) this.roll(now);
    return this.limit;
  }

  /** The effective rate at `now`, tokens per second. */
  current(now: number): number {
    return this.effective(now).rate;
  }

  private roll(now: number): void {
    const interval = this.config.intervalMs;
    if (!this.started) {
      this.started = true;
      this.windowStart = now;
      this.windowEnd = now + interval;
      return;
    }
    const startMs = this.windowStart;
    if (
      this.outcomes > 0 &&
      this.outcomes < this.config.minOutcomes &&
      now - startMs < interval * MAX_WINDOW_INTERVALS
    ) {
      // Too few outcomes to judge: the window grows by whole intervals instead
      // of being thrown away, so a limit running below minOutcomes per
      // interval (low rates) is still judged, over a longer window.
      this.windowEnd = startMs + (Math.floor((now - startMs) / interval) + 1) * interval;
      return;
    }
    const window = { outcomes: this.outcomes, failures: this.countedFailures() };
    const endMs = this.windowEnd;
    // Skip straight over the empty windows since: they are neutral.
    const elapsed = Math.floor((now - startMs) / interval);
    this.windowStart = startMs + elapsed * interval;
    this.windowEnd = this.windowStart + interval;
    this.outcomes = 0;
    this.failures = 0;
    if (this.keyFailures.size > 0) this.keyFailures.clear();
    this.firstKey = undefined;
    this.severalKeys = false;

    const previous = this.state.rate;
    this.state = aimdNext(this.state, window, this.config, this.config.random);
    const rate = this.state.rate;
    if (rate === previous) return;
    this.limit = effectiveBucket(this.config.declared, rate);
    if (rate < previous) this.lastCutAt = now;

    if (Math.abs(rate - this.notifiedRate) < this.config.notifyThreshold * this.notifiedRate)
      return;
    const previousRate = this.notifiedRate;
    this.notifiedRate = rate;
    this.onChange?.({
      name: this.name,
      previousRate,
      rate,
      burst: this.limit.burst,
      direction: rate < previous ? 'decrease' : 'increase',
      window: { startMs, endMs, ...window },
    });
  }
}
