import { nextTokenMs, type BucketLimit, type RateLimitDecision } from '../algorithms/gcra.js';
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';

/** One limit's contribution to the headers of a response. */
export interface HeaderLimit extends BucketLimit {
  readonly name: string;
}

/** A header name and value, ready for `HttpAdapter.setHeader`. */
export type HeaderPair = readonly [name: string, value: string];

const seconds = (ms: number): number => Math.ceil(ms / 1000 - TOKEN_EPSILON);

/**
 * `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-10): one member per
 * limit, `q` = burst, `w` = seconds to refill the whole burst (ceil, >= 1).
 * Limit names are restricted at start-up to characters that need no escaping
 * in a structured-field string.
 */
export function policyHeader(limits: readonly HeaderLimit[]): string {
  let value = '';
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    const windowSeconds = Math.max(1, seconds((limit.burst * 1000) / limit.rate));
    value += `${i === 0 ? '' : ', '}"${limit.name}";q=${Math.floor(limit.burst)};w=${windowSeconds}`;
  }
  return value;
}

/**
 * `RateLimit`: one member per limit, `r` = whole tokens remaining, `t` =
 * seconds until at least one more token is available (0 when one is now).
 */
export function rateLimitHeader(limits: readonly HeaderLimit[], decisions: readonly RateLimitDecision[]): string {
  let value = '';
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    const decision = decisions[i]!;
    value += `${i === 0 ? '' : ', '}"${limit.name}";r=${decision.remaining};t=${seconds(nextTokenMs(decision, limit))}`;
  }
  return value;
}

/**
 * `X-RateLimit-*` for the most restrictive limit: the fewest tokens left,
 * ties broken by the longest time to refill.
 */
export function legacyHeaders(limits: readonly HeaderLimit[], decisions: readonly RateLimitDecision[]): HeaderPair[] {
  let worst = 0;
  for (let i = 1; i < decisions.length; i++) {
    const candidate = decisions[i]!;
    const current = decisions[worst]!;
    if (candidate.remaining < current.remaining || (candidate.remaining === current.remaining && candidate.resetMs > current.resetMs)) {
      worst = i;
    }
  }
  return [
    ['X-RateLimit-Limit', String(Math.floor(limits[worst]!.burst))],
    ['X-RateLimit-Remaining', String(decisions[worst]!.remaining)],
    ['X-RateLimit-Reset', String(seconds(decisions[worst]!.resetMs))],
  ];
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
 */
export function retryAfterSeconds(decisions: readonly RateLimitDecision[]): number | undefined {
  let waitMs = 0;
  for (const decision of decisions) if (!decision.allowed) waitMs = Math.max(waitMs, decision.retryAfterMs);
  return Number.isFinite(waitMs) ? Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds(waitMs))) : undefined;
}
