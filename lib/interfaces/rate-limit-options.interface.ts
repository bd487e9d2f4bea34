import type { ExecutionContext } from '@nestjs/common';
import type { AdaptiveOptions } from './adaptive-options.interface.js';
import type { ConcurrencyLimitOptions } from './concurrency-limit-options.interface.js';
import type { BaseLimitOptions } from './limit-base-options.interface.js';
import type { RateLimitSettleOutcome } from './settle-options.interface.js';

// Declared in files of their own, exported from here as before (the entry points re-export this file's names).
export type {
  BaseLimitOptions,
  FailMode,
  KeyFunctionResult,
  KeyStrategy,
} from './limit-base-options.interface.js';
export type { ConcurrencyLimitOptions } from './concurrency-limit-options.interface.js';
export type { RateLimitSettleOutcome } from './settle-options.interface.js';

/**
 * A rate: tokens per second as a number, or `'<n>/<unit>'` / `'<n>/<k><unit>'`
 * with unit `ms|s|sec|second|m|min|minute|h|hour|d|day` (plural forms too):
 * `'10/s'`, `'100/min'`, `'100/15min'`, `'1/h'`.
 */
export type Rate = number | string;

/** A rate that depends on the call: a plan's, looked up synchronously or not. */
export type DynamicRate = (context: ExecutionContext) => Rate | Promise<Rate>;
/** A burst that depends on the call. */
export type DynamicBurst = (context: ExecutionContext) => number | Promise<number>;

/**
 * How a limit counts (see docs/algorithms.md):
 * - `'token-bucket'`: `rate` tokens per second refill a bucket of `burst`;
 *   over any time `T` it admits at most `burst + rate x T`.
 * - `'fixed-window'`: `rate` read as `'N/<window>'`, at most N per window;
 *   windows are aligned on multiples of the window since the Unix epoch (or
 *   on calendar days or months with `calendar`). Up to 2N can pass within
 *   one window's length across an edge.
 * - `'sliding-window'`: at most N in (an estimate of) the last window:
 *   the previous window's count, weighted by how much of it is still inside
 *   the last window, plus the current window's (Cloudflare's weighted
 *   two-window counter; its error is measured in docs/algorithms.md).
 */
export type RateLimitAlgorithm = 'token-bucket' | 'fixed-window' | 'sliding-window';

/** Calendar alignment of a `'fixed-window'` limit (see {@link WindowLimitOptions.calendar}). */
export interface CalendarOptions {
  /**
   * IANA time zone name whose midnight (or first of the month) starts each
   * window; validated at start-up with `Intl.DateTimeFormat`.
   * @default 'UTC'
   */
  readonly timeZone?: string;
}

/**
 * Which requests a limit counts:
 * - `'always'`: every admitted request (the default);
 * - `'failures'`: only those whose handler failed (login attempts: a
 *   successful login gives its token back);
 * - `'successes'`: only those whose handler succeeded (a failed call gives
 *   its token back).
 */
export type ChargeMode = 'always' | 'failures' | 'successes';

/**
 * What a handler's call came to, as `RateLimitInterceptor` sees it: the
 * input of a limit's `isChargeFailure` predicate.
 *
 * @publicApi
 */
export interface RateLimitOutcome {
  /** What the handler threw (or its observable errored with); `undefined` when it completed. */
  readonly error: unknown;
  /** The response the transport found (Express `res`, Fastify `reply`); `undefined` where there is none (WebSocket, RPC). */
  readonly response: unknown;
  /** The call being judged (its request, handler and class). */
  readonly context: ExecutionContext;
  /**
   * The default verdict, used when the limit has no `isChargeFailure`: the handler
   * threw (anything but the limiter's own `RateLimitExceededException`), or
   * the response's status is 400 or more.
   */
  readonly failed: boolean;
}

/**
 * `skip`: a predicate of the call; when it answers `true` the limit does not
 * apply to that call (not charged, not in the headers). Synchronous or not.
 */
export type SkipPredicate = (context: ExecutionContext) => boolean | Promise<boolean>;

/**
 * What both kinds of rate limit take (a token bucket and a window): how much
 * a request costs, which requests count, and when a limit does not apply.
 * Refuses the options of a concurrency limit.
 *
 * @publicApi
 */
export interface RequestRateOptions extends BaseLimitOptions {
  /**
   * Tokens one request takes; a number or a (synchronous) function of the context.
   * @default 1
   */
  readonly cost?: number | ((context: ExecutionContext) => number);
  /**
   * Which requests count: `'failures'` (e.g. login attempts) or `'successes'`
   * give the token back after the handler when the outcome says the request
   * should not have counted. Race-free: every request is charged when it is
   * admitted, so concurrent requests can never get past the limit together.
   * @default 'always'
   */
  readonly charge?: ChargeMode;
  /**
   * Decides what a failure is for `charge` (default: the handler threw, or
   * answered 400 or more: client errors count, as for a login). Only with
   * `charge: 'failures'` or `'successes'`. One that throws leaves the request
   * charged. Not `adaptive.isServerFailure`, which decides what slows an
   * adaptive rate down (default: 5xx only).
   */
  readonly isChargeFailure?: (outcome: RateLimitOutcome) => boolean;
  /**
   * @deprecated since 0.2.0, removed in 0.3.0: use {@link isChargeFailure}
   * (the same predicate, renamed so that it is not mistaken for
   * `adaptive.isFailure`, now `adaptive.isServerFailure`). Still accepted,
   * with a warning at start-up; not together with `isChargeFailure`.
   */
  readonly isFailure?: (outcome: RateLimitOutcome) => boolean;
  /**
   * When it answers `true` (synchronously or not), this limit does not apply
   * to the call: not charged, not in the headers. One that throws or rejects
   * does not skip, and says so once in the log.
   */
  readonly skip?: SkipPredicate;
  /**
   * Decide and charge as usual, but never deny: a would-be denial is
   * admitted, counted (published as `'shadow-denied'`) and said once per
   * burst in the log. For rolling a new limit out on real traffic. A shadow
   * limit is not in the headers.
   * @default false (the module's `shadow`)
   */
  readonly shadow?: boolean;
  /** Only on a concurrency limit: this is a rate limit (declare a second limit, another name, for concurrency). */
  readonly concurrency?: never;
  /** Only on a concurrency limit (one with `concurrency: N`). */
  readonly leaseTimeout?: never;
}

/**
 * A token-bucket limit (the default algorithm): `rate` tokens per second
 * refill a bucket of `burst`.
 *
 * ```ts
 * @RateLimit({ rate: '100/min', burst: 20 })
 * ```
 *
 * @publicApi
 */
export interface TokenBucketLimitOptions extends RequestRateOptions {
  /**
   * How the limit counts (see {@link RateLimitAlgorithm}); a window
   * algorithm makes it a {@link WindowLimitOptions}.
   * @default 'token-bucket'
   */
  readonly algorithm?: 'token-bucket';
  /**
   * Refill rate: tokens per second, or a string such as `'100/min'`; or a
   * function of the call giving one, synchronously or not (a plan looked up
   * from a cache), validated each time it answers. Required.
   */
  readonly rate?: Rate | DynamicRate;
  /**
   * Bucket capacity: how many requests may arrive at once; or a function of the call.
   * Token bucket only: refused with a window `algorithm` (the quota is the rate's count).
   *
   * Without it, a string rate's bucket holds the count it is written with:
   * `'100/min'` admits 100 at once, then refills at 100 per minute (and
   * `'100/15min'` holds 100). A numeric rate holds one second of it (`rate: 5`
   * holds 5). Rounded up, at least 1; a rate function's value gets the same
   * default on each call. (Before 0.2.0 a string rate held one second too:
   * `'100/min'` held 2.)
   * @default a string rate's count (`'100/min'`: 100); a number's one second (`5`: 5); at least 1
   */
  readonly burst?: number | DynamicBurst;
  /** Let the AIMD controller move the rate between bounds from downstream outcomes. */
  readonly adaptive?: AdaptiveOptions;
  /**
   * A penalty: once a request is denied by this limit, its key is blocked
   * for this long (milliseconds, or `'15min'`, `'1h'`...): every request
   * denied until then, `Retry-After` and `t` saying when it ends; then the
   * bucket refills at its rate. A blocked key costs what a denied one costs.
   */
  readonly blockDuration?: number | string;
  /**
   * Smooth bursts instead of refusing them: a request this limit would deny
   * but could admit within `maxDelay` (milliseconds, or `'500ms'`, `'2s'`...)
   * reserves its token at once and waits for it; later requests queue behind
   * it, in order, never over the rate. Beyond `maxDelay` it is denied as
   * usual. A client that goes away while waiting gives its token back.
   * At most one hour.
   * @default 0 (never wait)
   */
  readonly maxDelay?: number | string;
  /**
   * Reserve and settle, for a cost known only afterwards (LLM tokens, rows
   * exported): `cost` is the estimate, reserved at admission with the other
   * limits as usual; after the handler (for a stream, when it ends) `settle`
   * answers what the call really cost, synchronously or not, and the
   * difference goes to the same bucket: given back when lower (never making
   * it fuller than full), charged when higher, even past empty (debt: the
   * caller's next requests wait until it is repaid at the rate; the call that
   * overspent is never refused after the fact). An answer that is not a
   * number >= 0, or a `settle` that throws or rejects, settles at the
   * estimate and is said once per burst in the log. Not with `charge`
   * (settle at 0 what should not count), nor on a shadow limit. Needs a store
   * with `settle` (the built-in ones). See docs/settle.md.
   */
  readonly settle?: (outcome: RateLimitSettleOutcome) => number | Promise<number>;
  /** Only with `algorithm: 'fixed-window'` (windows aligned on calendar days or months). */
  readonly calendar?: never;
}

/**
 * A window limit: at most N requests per window, counted by a fixed or a
 * sliding window (see {@link RateLimitAlgorithm}). Refuses what only a
 * token bucket has: `burst`, `adaptive`, `maxDelay`, `blockDuration` and
 * rate functions.
 *
 * ```ts
 * @RateLimit({ name: 'daily', rate: '1000/day', algorithm: 'fixed-window', calendar: { timeZone: 'Europe/Paris' } })
 * ```
 *
 * @publicApi
 */
export interface WindowLimitOptions extends RequestRateOptions {
  /**
   * How the limit counts: `'fixed-window'` or `'sliding-window'` (see
   * {@link RateLimitAlgorithm}).
   */
  readonly algorithm: 'fixed-window' | 'sliding-window';
  /**
   * The count per window: `'100/15min'` is at most 100 per 15-minute window,
   * `'1000/day'` 1000 per day; a number N is N per second (a 1 s window). No
   * functions. `'N/month'` only with `calendar`. Required.
   */
  readonly rate?: Rate;
  /**
   * `'fixed-window'` only: align windows on the calendar of a time zone
   * instead of on multiples of the window since the epoch. The rate must
   * count per day (`'1000/day'`: the count starts over at midnight in
   * `timeZone`, a window of 23 to 25 hours where daylight saving moves the
   * clocks) or per month (`'50000/month'`: on the 1st at midnight).
   * `{}` is UTC.
   */
  readonly calendar?: CalendarOptions;
  /** Token bucket only: a window has no burst, the quota is the rate's count (`'100/min'` admits 100 per minute). */
  readonly burst?: never;
  /** Token bucket only: it moves a refill rate, which a window does not have. */
  readonly adaptive?: never;
  /** Token bucket only: a window cannot be blocked past its end. */
  readonly blockDuration?: never;
  /** Token bucket only: a window has no steady refill to wait for. */
  readonly maxDelay?: never;
  /** Token bucket only: a window has no refill to repay a debt with. */
  readonly settle?: never;
}

/**
 * One limit, as declared in `@RateLimit()`, in the module's `limits`, or as
 * `defaults`: a token bucket (the default), a window (`algorithm:
 * 'fixed-window'` or `'sliding-window'`) or a concurrency limit
 * (`concurrency: N`). Each kind declares the options it refuses as `never`,
 * so that a limit mixing kinds (`{ concurrency: 4, rate: 10 }`,
 * `{ algorithm: 'fixed-window', burst: 5 }`) does not compile; the same
 * checks run at start-up for JavaScript callers.
 *
 * @publicApi
 */
export type RateLimitOptions =
  TokenBucketLimitOptions | WindowLimitOptions | ConcurrencyLimitOptions;
