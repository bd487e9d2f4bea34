import { describeValue } from '../errors/option-error.js';
import { RateLimitExceededException } from '../errors/rate-limit-exceeded.exception.js';
import type { RateLimitCheck } from '../store/rate-limit-store.interface.js';
import type { AfterHandlerStep } from './call-steps.js';
import type { LimitPolicy } from './limit-policy.js';
import type { RateLimitOutcome } from '../interfaces/rate-limit-options.interface.js';
import type { ChargePolicy } from '../limits/resolved-limit.js';

export type { ChargePolicy } from '../limits/resolved-limit.js';

/**
 * Validate `charge` and its predicate (`isChargeFailure`, or `option`: the
 * deprecated `isFailure` when that is the name used); `undefined` for a limit
 * that counts every request (nothing to do after the handler). Throws
 * through `fail`.
 */
export function resolveChargePolicy(
  charge: unknown,
  isFailure: unknown,
  fail: (option: string, problem: string) => never,
  option = 'isChargeFailure',
): ChargePolicy | undefined {
  const mode = charge ?? 'always';
  if (mode !== 'always' && mode !== 'failures' && mode !== 'successes') {
    fail('charge', `must be 'always', 'failures' or 'successes', got ${describeValue(charge)}`);
  }
  if (isFailure !== undefined && typeof isFailure !== 'function') {
    fail(option, `must be a function (outcome) => boolean, got ${describeValue(isFailure)}`);
  }
  if (mode === 'always') {
    if (isFailure !== undefined)
      fail(
        option,
        "only applies with charge: 'failures' or 'successes'; this limit counts every request",
      );
    return undefined;
  }
  return { mode: mode as ChargePolicy['mode'], isFailure: isFailure as ChargePolicy['isFailure'] };
}

/**
 * The default verdict: a thrown error (other than the limiter's own 429), or
 * a status of 400 or more on the response (HTTP; a transport without one has
 * no status and fails only by throwing).
 */
export function failedByDefault(error: unknown, response: unknown): boolean {
  if (error !== undefined) return !(error instanceof RateLimitExceededException);
  const status = (response as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof status === 'number' && status >= 400;
}

/**
 * Whether the request should stay charged, given its outcome. A predicate
 * that throws cannot decide: the request stays charged (the safe side), and
 * the caller says so in the log.
 */
export function keepsCharge(policy: ChargePolicy, outcome: RateLimitOutcome): boolean {
  const failed = policy.isFailure ? policy.isFailure(outcome) === true : outcome.failed;
  return policy.mode === 'failures' ? failed : !failed;
}

/**
 * The checks to give back after a handler's outcome: those of limits with a
 * {@link ChargePolicy} whose outcome says the request should not have
 * counted. `undefined` when there is none (no allocation on that path).
 * `onPredicateError` is told when an `isFailure` throws (the check stays charged).
 */
export function checksToRefund(
  limits: readonly { readonly name: string; readonly charge: ChargePolicy | undefined }[],
  checks: readonly RateLimitCheck[] | undefined,
  outcome: RateLimitOutcome,
  onPredicateError: (limitName: string, error: unknown) => void,
): RateLimitCheck[] | undefined {
  if (checks === undefined) return undefined; // not charged (a store failure admitted it): nothing to give back
  let refunds: RateLimitCheck[] | undefined;
  for (let i = 0; i < limits.length; i++) {
    const { charge, name } = limits[i]!;
    const check = checks[i];
    if (charge === undefined || check === undefined) continue;
    let keep: boolean;
    try {
      keep = keepsCharge(charge, outcome);
    } catch (error) {
      onPredicateError(name, error);
      continue;
    }
    if (!keep) (refunds ??= []).push(check);
  }
  return refunds;
}

/** The step after the handler: the tokens of limits whose outcome did not count go back (not awaited). */
export const refundByOutcome: AfterHandlerStep = (outcome, { engine, onPredicateError }) => {
  const { error, response, context } = outcome;
  const judged = { error, response, context, failed: failedByDefault(error, response) };
  const refunds = checksToRefund(outcome.limits, outcome.checks, judged, onPredicateError);
  if (refunds !== undefined) engine.refundCharged(refunds);
};

/**
 * `charge` and `isChargeFailure` (deprecated name: `isFailure`, said once at
 * start-up): acts after the handler (`RateLimitInterceptor` refunds what
 * should not have counted).
 */
export const chargePolicy: LimitPolicy<'charge'> = {
  options: ['charge', 'isChargeFailure', 'isFailure'],
  refusedOnConcurrency: {
    charge: 'is a rate-limit option; a slot is always given back when the request ends',
    isChargeFailure:
      'is a rate-limit option (for charge); a slot is always given back when the request ends',
    isFailure:
      'is a rate-limit option (for charge); a slot is always given back when the request ends',
  },
  appliesTo: (limit) => limit.charge !== undefined,
  afterHandler: refundByOutcome,
  needsInterceptor: (options) => options.charge !== undefined && options.charge !== 'always',
  resolve: (options, draft, context, fail) => {
    let option = 'isChargeFailure';
    let predicate: unknown = options.isChargeFailure;
    if (options.isFailure !== undefined) {
      if (predicate !== undefined)
        fail('isFailure', 'is the deprecated name of isChargeFailure: give only isChargeFailure');
      context.deprecated?.('isFailure', 'isChargeFailure', draft.name, options);
      option = 'isFailure';
      predicate = options.isFailure;
    }
    return { charge: resolveChargePolicy(options.charge, predicate, fail, option) };
  },
};
