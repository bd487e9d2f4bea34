/**
 * What a handler's call came to, as `RateLimitInterceptor` sees it: the input
 * of an adaptive limit's `isServerFailure` predicate.
 *
 * @publicApi
 */
export interface AdaptiveHandlerResult {
  /** What the handler threw (or its observable errored with); `undefined` when it completed. */
  readonly error: unknown;
  /** The response the transport found (Express `res`, Fastify `reply`); `undefined` where there is none (WebSocket, RPC). */
  readonly response: unknown;
  /** How long the call took, ms. */
  readonly latencyMs: number;
  /**
   * The transport's own verdict, used when the limit has no `isServerFailure`: over
   * HTTP (and GraphQL), a status >= 500 or a thrown error that is not an
   * `HttpException` below 500; elsewhere, any thrown error that is not one.
   */
  readonly failed: boolean;
}

/**
 * Options of an adaptive limit: `@RateLimit({ rate: 100, adaptive: { min: 10, max: 200 } })`.
 *
 * The limit's declared `rate` is where the effective rate starts; AIMD then
 * moves it between `min` and `max` from the outcomes of the requests the limit
 * admitted, one decision per evaluation window. Every option is optional and
 * validated at start-up (`resolveAdaptiveOptions`). See `docs/adaptive.md`
 * for how the defaults were chosen.
 *
 * @publicApi
 */
export interface AdaptiveOptions {
  /**
   * Lowest effective rate, tokens per second (> 0, at most the declared rate).
   * @default declared rate / 10
   */
  readonly min?: number;
  /**
   * Highest effective rate, tokens per second (at least the declared rate).
   * The default never lets the rate exceed what was declared: adaptation only
   * sheds load. Raise it to let the limit probe for more.
   * @default declared rate
   */
  readonly max?: number;
  /**
   * Factor applied to the rate after a bad window, in (0, 1).
   * @default 0.8
   */
  readonly decrease?: number;
  /**
   * Tokens per second added after a healthy window, as an absolute rate (> 0).
   * It is a rate, not a fraction: a step of 2 moves a limit of 100/s to
   * 102/s. The default scales with the declared rate.
   * @default declared rate × 0.02
   */
  readonly increase?: number;
  /**
   * A window is bad when `(failures + congestion signals) / outcomes` exceeds
   * this ratio, in [0, 1). Keep it above the error rate your service has when
   * it is healthy.
   * @default 0.1
   */
  readonly failureThreshold?: number;
  /**
   * Consecutive healthy windows needed before the rate grows (integer >= 1).
   * After a cut, the rate holds for this many windows; then it grows on every
   * healthy window until a bad one.
   * @default 2
   */
  readonly healthyWindows?: number;
  /**
   * Outcomes a window needs to be judged (integer >= 1). A window with fewer
   * grows by whole intervals until it has enough; one still short after 10
   * intervals is neither healthy nor bad: it changes nothing.
   * @default 20
   */
  readonly minOutcomes?: number;
  /**
   * Length of an evaluation window in milliseconds (>= 1). Windows are closed
   * lazily, by the first outcome or read after their end: no timer runs.
   * @default 1000
   */
  readonly intervalMs?: number;
  /**
   * Latency above which a served request counts as a congestion signal (like
   * a failure), in milliseconds (> 0). Without it, latency is ignored.
   * @default undefined
   */
  readonly latencyTargetMs?: number;
  /**
   * Relative spread applied to every step, in [0, 1): with 0.1, a cut or a
   * growth step is scaled by a random factor in [0.9, 1.1), so instances
   * that see the same overload do not move in lockstep.
   * @default 0.1
   */
  readonly jitter?: number;
  /**
   * Source of randomness for `jitter`, returning values in [0, 1). Pass a
   * seeded generator (`seededRandom(42)`) for reproducible tests.
   * @default Math.random
   */
  readonly random?: () => number;
  /**
   * Relative change, in [0, 1), from the last notified rate at which a change
   * is logged and sent to `onRateChange` listeners. Small steps accumulate
   * until they add up to it; 0 notifies every change.
   * @default 0.05
   */
  readonly notifyThreshold?: number;
  /**
   * Largest share of a window's outcomes that the failures of one key may
   * make up, in [0, 1]: the failures a key had beyond
   * `max(1, floor(maxKeyShare × outcomes))` do not count. The key is the
   * bucket key the limit charged the request under (`'ip'`: the client
   * address, IPv6 grouped by `ipv6Subnet`; `'user'`: the user), as the
   * interceptor reports it; outcomes reported without a key, and windows in
   * which a single key had every outcome (a `'global'` key, one client), are
   * counted in full. With the default, one key (or two) cannot make a
   * window bad on its own: an attacker controlling k keys adds at most
   * `k × maxKeyShare` to a window's failure ratio. `1` turns the bound off.
   * Keys a client can mint freely (a header, an unauthenticated key function)
   * bound nothing: see `docs/adaptive.md`.
   * @default failureThreshold / 2
   */
  readonly maxKeyShare?: number;
  /**
   * Whether a handler's call says the protected resource struggles (a
   * failure that slows the rate down), replacing the transport's verdict
   * (`result.failed`: 5xx, thrown non-HTTP errors; a 4xx is the client's
   * doing and does not count). For example
   * `(r) => r.error instanceof DownstreamTimeoutError || r.failed`, or leave
   * out errors a client can cause with its own input. Called once per
   * admitted call of a route with this limit (not for `report()` from
   * application code); an error it throws is logged and the transport's
   * verdict is used. Not the limit's `isChargeFailure` (for `charge`, which
   * counts 4xx too).
   * @default the transport's verdict
   */
  readonly isServerFailure?: (result: AdaptiveHandlerResult) => boolean;
  /**
   * @deprecated since 0.2.0, removed in 0.3.0: use {@link isServerFailure}
   * (the same predicate, renamed so that it is not mistaken for the limit's
   * `isFailure`, now `isChargeFailure`, whose default differs). Still
   * accepted, with a warning at start-up; not together with `isServerFailure`.
   */
  readonly isFailure?: (result: AdaptiveHandlerResult) => boolean;
}
