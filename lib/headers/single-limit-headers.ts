import type { RateLimitDecision } from '../algorithms/gcra.js';
import { HeaderName } from './header-names.js';
import {
  quota,
  wholeSeconds,
  windowSeconds,
  type HeaderLimit,
  type HeaderPair,
} from './rate-limit-headers.js';

/**
 * The formats that describe one limit (`X-RateLimit-*`, and the earlier IETF
 * drafts as express-rate-limit writes them) report the most restrictive of the
 * limits that applied: the fewest tokens left, ties broken by the longest time
 * to refill. Their `reset` is the time until that bucket is full again: a
 * client that reads it as "the whole quota is back then" is never wrong.
 */
function mostRestrictive(decisions: readonly RateLimitDecision[]): number {
  let worst = 0;
  for (let i = 1; i < decisions.length; i++) {
    const candidate = decisions[i]!;
    const current = decisions[worst]!;
    if (
      candidate.remaining < current.remaining ||
      (candidate.remaining === current.remaining && candidate.resetMs > current.resetMs)
    ) {
      worst = i;
    }
  }
  return worst;
}

/**
 * These formats speak of a quota per window and a reset time, which a
 * `concurrency` limit has not: its members are left out of them (the
 * `'draft'` mode reports it). Answers the input itself when there is none.
 */
function rateMembers(
  limits: readonly HeaderLimit[],
  decisions: readonly RateLimitDecision[],
): [readonly HeaderLimit[], readonly RateLimitDecision[]] {
  if (!limits.some((limit) => limit.unit !== undefined)) return [limits, decisions];
  const kept = limits.map((_limit, i) => i).filter((i) => limits[i]!.unit === undefined);
  return [kept.map((i) => limits[i]!), kept.map((i) => decisions[i]!)];
}

/** `X-RateLimit-Limit`, `-Remaining`, `-Reset` (seconds until full) for the most restrictive limit. */
export function legacyHeaders(
  allLimits: readonly HeaderLimit[],
  allDecisions: readonly RateLimitDecision[],
): HeaderPair[] {
  const [limits, decisions] = rateMembers(allLimits, allDecisions);
  if (limits.length === 0) return [];
  const worst = mostRestrictive(decisions);
  return [
    [HeaderName.legacyLimit, String(quota(limits[worst]!))],
    [HeaderName.legacyRemaining, String(decisions[worst]!.remaining)],
    [HeaderName.legacyReset, String(wholeSeconds(decisions[worst]!.resetMs))],
  ];
}

/**
 * draft-ietf-httpapi-ratelimit-headers-06's `RateLimit-Policy`, as
 * express-rate-limit writes it: a List of Integers (the quota) with a `w`
 * parameter, one member per limit.
 */
export function numericPolicyHeader(allLimits: readonly HeaderLimit[]): string {
  const limits = allLimits.filter((limit) => limit.unit === undefined);
  let value = '';
  for (let i = 0; i < limits.length; i++)
    value += `${i === 0 ? '' : ', '}${quota(limits[i]!)};w=${windowSeconds(limits[i]!)}`;
  return value;
}

/** `'draft-6'`: `RateLimit-Limit`, `-Remaining`, `-Reset` for the most restrictive limit, and the numeric policy. */
export function draft6Headers(
  allLimits: readonly HeaderLimit[],
  allDecisions: readonly RateLimitDecision[],
): HeaderPair[] {
  const [limits, decisions] = rateMembers(allLimits, allDecisions);
  if (limits.length === 0) return [];
  const worst = mostRestrictive(decisions);
  return [
    [HeaderName.policy, numericPolicyHeader(limits)],
    [HeaderName.limit, String(quota(limits[worst]!))],
    [HeaderName.remaining, String(decisions[worst]!.remaining)],
    [HeaderName.reset, String(wholeSeconds(decisions[worst]!.resetMs))],
  ];
}

/** `'draft-7'`: one `RateLimit: limit=…, remaining=…, reset=…` Dictionary for the most restrictive limit, and the numeric policy. */
export function draft7Headers(
  allLimits: readonly HeaderLimit[],
  allDecisions: readonly RateLimitDecision[],
): HeaderPair[] {
  const [limits, decisions] = rateMembers(allLimits, allDecisions);
  if (limits.length === 0) return [];
  const worst = mostRestrictive(decisions);
  const limit = quota(limits[worst]!);
  const decision = decisions[worst]!;
  return [
    [HeaderName.policy, numericPolicyHeader(limits)],
    [
      HeaderName.rateLimit,
      `limit=${limit}, remaining=${decision.remaining}, reset=${wholeSeconds(decision.resetMs)}`,
    ],
  ];
}
