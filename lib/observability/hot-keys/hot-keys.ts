import type { ResolvedHotKeysOptions } from '../../interfaces/hot-keys-options.interface.js';
import { SpaceSaving } from './space-saving.js';

/** One of the most denied callers of a limit, as {@link RateLimiter.hottestKeys} reports it. */
export interface HotKey {
  /** The limit's name. */
  readonly limit: string;
  /** The caller, as the limit's key identified it (an address, a user id, a header's value...). */
  readonly key: string;
  /** Denials counted for it: an upper bound, exact when `overcount` is 0. */
  readonly denied: number;
  /** How many of `denied` may belong to callers it displaced from the summary: the true count is at least `denied - overcount`. */
  readonly overcount: number;
}

/** What {@link RateLimiter.hottestKeys} takes. */
export interface HottestKeysQuery {
  /** One limit's callers (by name); every limit's when omitted. */
  readonly limit?: string;
  /** At most this many per limit. @default 10 */
  readonly top?: number;
}

/**
 * The callers each limit denied most, recently: one space-saving summary of
 * fixed size per limit name and per window, the current window's and the
 * previous one's. Memory is bounded by the option's `size` × 2 × the limit
 * names the application declares (never by callers). Windows turn over
 * lazily, on the next denial or read: no timer.
 *
 * @internal
 */
export class HotKeys {
  private current = new Map<string, SpaceSaving>();
  private previous = new Map<string, SpaceSaving>();
  private windowStart: number;

  constructor(
    private readonly options: ResolvedHotKeysOptions,
    now: number,
    /** Where a finished window's top callers are said (`log`). */
    private readonly say: (message: string) => void,
  ) {
    this.windowStart = now;
  }

  /**
   * Callers held now, over both windows and every limit: at most `size` x 2
   * x the limit names, however many callers are denied (what the
   * reliability suite asserts under a flood of keys).
   */
  get counted(): number {
    let counted = 0;
    for (const summary of this.current.values()) counted += summary.size;
    for (const summary of this.previous.values()) counted += summary.size;
    return counted;
  }

  /** Limit names with a summary now, over both windows. */
  get limits(): number {
    return new Set([...this.current.keys(), ...this.previous.keys()]).size;
  }

  /** `key` was denied by the limit `limit` at `now`. */
  denied(limit: string, key: string, now: number): void {
    this.turnOver(now);
    let summary = this.current.get(limit);
    if (summary === undefined) {
      summary = new SpaceSaving(this.options.size);
      this.current.set(limit, summary);
    }
    summary.add(key);
  }

  /** The most denied callers over the current and the previous window, most denied first within each limit. */
  hottest(query: HottestKeysQuery, now: number): HotKey[] {
    this.turnOver(now);
    const top = query.top ?? 10;
    const names =
      query.limit === undefined
        ? new Set([...this.previous.keys(), ...this.current.keys()])
        : [query.limit];
    const hot: HotKey[] = [];
    for (const limit of names)
      hot.push(...merged(limit, [this.previous.get(limit), this.current.get(limit)], top));
    return hot;
  }

  /** Say the current window's callers (at shutdown), as if it had ended. */
  flush(): void {
    this.report(this.current, this.windowStart);
    this.current = new Map();
  }

  private turnOver(now: number): void {
    const elapsed = now - this.windowStart;
    if (elapsed < this.options.windowMs) return;
    this.report(this.current, this.windowStart);
    // Two windows or more without a denial: nothing recent is left.
    this.previous = elapsed < 2 * this.options.windowMs ? this.current : new Map();
    this.current = new Map();
    this.windowStart = now - (elapsed % this.options.windowMs);
  }

  private report(window: Map<string, SpaceSaving>, start: number): void {
    if (this.options.logTop === 0 || window.size === 0) return;
    const seconds = Math.round(this.options.windowMs / 1000);
    for (const [limit, summary] of window) {
      const callers = summary
        .top(this.options.logTop)
        .map(
          ({ item, count, overcount }) =>
            `${item} (${count}${overcount > 0 ? `, ±${overcount}` : ''})`,
        )
        .join(', ');
      this.say(
        `RateLimit: limit "${limit}": most denied callers in the ${seconds} s window from ${new Date(start).toISOString()}: ${callers}`,
      );
    }
  }
}

/**
 * One limit's callers over both windows. A caller missing from a full
 * window's summary may still have been denied there up to that summary's
 * least count: its upper bound includes that, its lower bound does not.
 */
function merged(
  limit: string,
  windows: readonly (SpaceSaving | undefined)[],
  top: number,
): HotKey[] {
  const present = windows.filter((window): window is SpaceSaving => window !== undefined);
  const keys = new Set(present.flatMap((window) => window.top().map(({ item }) => item)));
  const counted = present.map(
    (window) => new Map(window.top().map((entry) => [entry.item, entry])),
  );
  const hot: HotKey[] = [];
  for (const key of keys) {
    let upper = 0;
    let lower = 0;
    for (let i = 0; i < present.length; i++) {
      const entry = counted[i]!.get(key);
      upper += entry?.count ?? present[i]!.uncountedBound;
      lower += entry === undefined ? 0 : entry.count - entry.overcount;
    }
    hot.push({ limit, key, denied: upper, overcount: upper - lower });
  }
  return hot.sort((a, b) => b.denied - a.denied || (a.key < b.key ? -1 : 1)).slice(0, top);
}
