import type { RateLimitDecision } from '../../algorithms/rate-limit-decision.js';
import type { ResolvedLimit } from '../../limits/resolved-limit.js';
import type { RateLimitCheck } from '../../store/rate-limit-store.interface.js';
import { isWindowLimit } from '../../store/rate-limit-store.interface.js';
import { realDecision, waitMs } from './reservation.js';

/** A decision of a route with `maxDelay` limits, as the headers and the guard need it. */
export interface DelayedAdmission {
  /** Each limit's decision against its real bucket. */
  readonly decisions: readonly RateLimitDecision[];
  /** How long the request waits before it proceeds: the longest of its limits' waits (0 when denied). */
  readonly waitMs: number;
  /** The bucket key of the limit with the longest wait (`undefined` when none waits). */
  readonly waitKey: string | undefined;
}

/**
 * The decisions of limits `from`..: those with `maxDelay` were charged
 * against their reserving bucket (the check's `limit`); they are answered in
 * terms of the real one, and an admitted request waits for the last of its
 * reserved tokens. Pure.
 */
export function delayedAdmission(
  limits: readonly ResolvedLimit[],
  from: number,
  checks: readonly RateLimitCheck[],
  allowed: boolean,
  decisions: readonly RateLimitDecision[],
): DelayedAdmission {
  let wait = 0;
  let waitKey: string | undefined;
  let real: RateLimitDecision[] | undefined;
  for (let i = 0; i < decisions.length; i++) {
    const delay = limits[from + i]?.maxDelayMs ?? 0;
    const check = checks[i];
    // maxDelay is refused at start-up for windows (resolve-limit.ts).
    if (delay === 0 || check === undefined || isWindowLimit(check.limit)) continue;
    const decision = decisions[i]!;
    const ms = allowed ? waitMs(decision, check.limit, delay) : 0;
    if (ms > wait) {
      wait = ms;
      waitKey = check.key;
    }
    const answered = realDecision(decision, check.limit, delay);
    if (answered !== decision) (real ??= decisions.slice())[i] = answered;
  }
  return { decisions: real ?? decisions, waitMs: wait, waitKey };
}
