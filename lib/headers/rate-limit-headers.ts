import { nextTokenMs, type BucketLimit, type RateLimitDecision } from '../algorithms/gcra.js';
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';

/** One limit's contribution to the headers of a response. */
export interface HeaderLimit extends BucketLimit {
  readonly name: string;
  /**
   * The draft's quota unit, when it is not requests per window: a
   * `concurrency` limit's members are `q=<slots>;qu="concurrent-requests"`
   * (no `w`) in the policy and `r=<free slots>` (no `t`) in `RateLimit`; its
   * `burst` is the slot count, its `rate` means nothing.
   */
  readonly unit?: 'concurrent-requests';
}

/** A header name and value, ready for `HttpAdapter.setHeader`. */
export type HeaderPair = readonly [name: string, value: string];

/**
 * Whole seconds, rounded up. Every field below rounds in the direction that
 * never promises more than the bucket gives: a wait or a window rounded up,
 * a quantity rounded down.
 */
export const wholeSeconds = (ms: number): number => Math.ceil(ms / 1000 - TOKEN_EPSILON);

/** The quota of a limit: whole tokens of its burst (a window limit's burst is its quota). */
export const quota = (limit: BucketLimit): number => Math.floor(limit.burst + TOKEN_EPSILON);

/**
 * Seconds an empty bucket takes to refill: the window of the quota (>= 1).
 * A window limit's rate is its quota per window, so this is its window.
 */
export const windowSeconds = (limit: BucketLimit): number =>
  Math.max(1, wholeSeconds((limit.burst * 1000) / limit.rate));

/**
 * `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-11, a List of
 * Strings with parameters): one member per limit, `q` = the burst, `w` = the
 * seconds an empty bucket takes to refill. Limit names are restricted at
 * start-up to characters that need no escaping in a structured-field string.
 */
export function policyHeader(limits: readonly HeaderLimit[]): string {
  let value = '';
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    const window = limit.unit === undefined ? `;w=${windowSeconds(limit)}` : `;qu="${limit.unit}"`;
    value += `${i === 0 ? '' : ', '}"${limit.name}";q=${quota(limit)}${window}`;
  }
  return value;
}

/**
 * `RateLimit` (draft -11): one member per limit, `r` = whole tokens left,
 * `t` = the effective window: the seconds within which the caller can use no
 * more than `r`, which for a token bucket is the time until one more whole
 * token is there (one emission interval when the bucket is full). Rounded up
 * and at least 1, so a client that spends `r` and then waits `t` finds a token.
 */
export function rateLimitHeader(
  limits: readonly HeaderLimit[],
  decisions: readonly RateLimitDecision[],
): string {
  let value = '';
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    const decision = decisions[i]!;
    // Free slots have no window: they come back when requests end, not with time.
    const window = limit.unit === undefined ? `;t=${effectiveWindowSeconds(decision, limit)}` : '';
    value += `${i === 0 ? '' : ', '}"${limit.name}";r=${decision.remaining}${window}`;
  }
  return value;
}

/**
 * Draft -11's `t` for one limit: see {@link rateLimitHeader}. A window
 * algorithm's decision carries it (`effectiveWindowMs`: until a fixed
 * window ends; until one more request's weight slid out of a sliding one).
 */
export function effectiveWindowSeconds(decision: RateLimitDecision, limit: BucketLimit): number {
  const ms = decision.effectiveWindowMs ?? nextTokenMs(decision, limit);
  return Math.max(1, wholeSeconds(ms));
}

/**
 * The largest `Retry-After`: 2^31 seconds (68 years), the value RFC 9111
 * (1.2.2) tells recipients to assume for any delta-seconds too large for them.
 */
export const MAX_RETRY_AFTER_SECONDS = 2_147_483_648;

/**
 * `Retry-After` of a denied request: whole seconds, rounded up, for the
 * slowest denying limit, from 1 to {@link MAX_RETRY_AFTER_SECONDS} (always a
 * valid delay-seconds); `undefined` when no wait can help (cost > burst).
 * Never earlier than the denying limit's `t` (draft -11, section 6).
 */
export function retryAfterSeconds(decisions: readonly RateLimitDecision[]): number | undefined {
  let waitMs = 0;
  for (const decision of decisions)
    if (!decision.allowed) waitMs = Math.max(waitMs, decision.retryAfterMs);
  return Number.isFinite(waitMs)
    ? Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, wholeSeconds(waitMs)))
    : undefined;
}
