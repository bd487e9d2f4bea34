import { describeValue } from '../../errors/option-error.js';
import { parseDuration } from '../../limits/parse-duration.js';
import type { DecisionStep } from '../call-steps.js';
import type { LimitPolicy } from '../limit-policy.js';
import { delayedAdmission } from './delayed-admission.js';

/** The longest `maxDelay`: a request held longer than an hour is a typo (`'15d'`), not a design. */
export const MAX_DELAY_MS = 3_600_000;

/**
 * Validate `maxDelay`; its milliseconds, 0 when the limit has none. Throws
 * through `fail`, naming the option.
 */
export function resolveMaxDelay(
  value: unknown,
  limit: { readonly rate: number; readonly shadow: boolean; readonly dynamic: boolean },
  fail: (option: string, problem: string) => never,
): number {
  if (value === undefined || value === 0) return 0;
  const ms = parseDuration(value);
  if (ms === undefined)
    fail(
      'maxDelay',
      `must be a positive number of milliseconds or a duration such as '500ms', got ${describeValue(value)}`,
    );
  if (ms! > MAX_DELAY_MS)
    fail(
      'maxDelay',
      `(${ms} ms) must be at most ${MAX_DELAY_MS} ms (one hour): a request held longer is better refused`,
    );
  if (limit.shadow)
    fail('maxDelay', 'means nothing on a shadow limit, which never makes a request wait');
  // The reservation is in the bucket the store is given, built once per bucket; a bucket built per call has no room for it yet.
  if (limit.dynamic)
    fail(
      'maxDelay',
      'cannot be combined with a rate or burst function (yet): give the limit a fixed rate and burst',
    );
  return ms!;
}

/**
 * The step on the decision: limits with `maxDelay` were charged against
 * their reserving bucket; the call is answered in terms of the real one, and
 * an admitted call waits for the last of its reserved tokens (`input.waitMs`).
 */
export const waitForReservedTokens: DecisionStep = (input, result) => {
  const delayed = delayedAdmission(
    input.route.limits,
    input.from,
    input.checks,
    result.allowed,
    result.decisions,
  );
  input.waitMs = delayed.waitMs;
  input.waitKey = delayed.waitKey;
  return { allowed: result.allowed, decisions: delayed.decisions };
};

/** `maxDelay`: compiled into the limit's bucket (the reserving one), acts on the decision (an admitted request waits). */
export const delayPolicy: LimitPolicy<'maxDelayMs'> = {
  options: ['maxDelay'],
  refusedOnConcurrency: {
    maxDelay: 'is a rate-limit option; a concurrency limit refuses at once rather than queueing',
  },
  appliesTo: (limit) => limit.maxDelayMs > 0,
  onDecision: waitForReservedTokens,
  resolve: (options, draft, _context, fail) => ({
    maxDelayMs: resolveMaxDelay(
      options.maxDelay,
      { rate: draft.rate, shadow: draft.shadow === true, dynamic: draft.dynamic !== undefined },
      fail,
    ),
  }),
};
