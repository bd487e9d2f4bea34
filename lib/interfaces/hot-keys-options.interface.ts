/**
 * The module's `hotKeys` option: keep a fixed-size summary of the callers
 * each limit denies most. Off by default: the summary holds caller
 * identities (addresses, user ids, API keys), which can be personal data.
 */
export interface HotKeysOptions {
  /**
   * Callers counted per limit (the summary's fixed size). Every caller
   * denied more than 1/`size` of a limit's denials is in it.
   * @default 100
   */
  readonly size?: number;
  /**
   * What "recent" means: {@link RateLimiter.hottestKeys} covers the current
   * window and the one before it (so between one and two windows).
   * Milliseconds or a duration such as `'5min'`, from 1 s to 1 day.
   * @default '1min'
   */
  readonly window?: number | string;
  /**
   * @deprecated since 0.2.0, removed in 0.3.0: use {@link window}, which takes
   * the same values (a name ending in `Ms` should not take `'1min'`). Still
   * accepted, with a warning at start-up; not together with `window`.
   */
  readonly windowMs?: number | string;
  /**
   * Say each window's most denied callers in the log (`true`: the top 10 per
   * limit; or `{ top }`), when the window ends and the next denial arrives,
   * or at shutdown. Caller identities then reach the logs: opt in knowingly.
   * @default false
   */
  readonly log?: boolean | { readonly top?: number };
}

/** `hotKeys` after validation. @internal */
export interface ResolvedHotKeysOptions {
  readonly size: number;
  readonly windowMs: number;
  /** Callers per limit said in the log at the end of a window; 0 when not logged. */
  readonly logTop: number;
}
