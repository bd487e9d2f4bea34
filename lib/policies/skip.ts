import type { ExecutionContext } from '@nestjs/common';
import { describeValue } from '../errors/option-error.js';
import type { MaybePromise } from '../store/rate-limit-store.interface.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import type { LimitPolicy } from './limit-policy.js';
import type { SkipPredicate } from '../interfaces/rate-limit-options.interface.js';

/** Validate a `skip` option (a limit's or the module's). Throws through `fail`. */
export function resolveSkip(
  skip: unknown,
  fail: (option: string, problem: string) => never,
): SkipPredicate | undefined {
  if (skip === undefined) return undefined;
  if (typeof skip !== 'function')
    fail('skip', `must be a function (context) => boolean, got ${describeValue(skip)}`);
  return skip as SkipPredicate;
}

/**
 * Run a predicate so that it cannot stop the limiter from limiting: one that
 * throws or rejects does not skip (the limit applies), and `onError` is told.
 * Only a strict `true` skips.
 */
export function runSkip(
  skip: SkipPredicate,
  context: ExecutionContext,
  onError: (error: unknown) => void,
): MaybePromise<boolean> {
  let answer: boolean | Promise<boolean>;
  try {
    answer = skip(context);
  } catch (error) {
    onError(error);
    return false;
  }
  if (!isPromiseLike(answer)) return answer === true;
  return Promise.resolve(answer).then(
    (value) => value === true,
    (error: unknown) => {
      onError(error);
      return false;
    },
  );
}

/**
 * Which of `limits` a call skips, as a bit mask (bit `i` for `limits[i]`); synchronous while every predicate is.
 */
export function skippedLimits(
  limits: readonly { readonly name: string; readonly skip: SkipPredicate | undefined }[],
  context: ExecutionContext,
  onError: (limitName: string, error: unknown) => void,
): MaybePromise<number> {
  let mask = 0;
  let pending: Promise<void>[] | undefined;
  for (let i = 0; i < limits.length; i++) {
    const skip = limits[i]!.skip;
    if (skip === undefined) continue;
    const answer = runSkip(skip, context, (error) => onError(limits[i]!.name, error));
    if (answer === true) mask |= 1 << i;
    else if (answer !== false)
      (pending ??= []).push(answer.then((skipped) => void (skipped && (mask |= 1 << i))));
  }
  return pending === undefined ? mask : Promise.all(pending).then(() => mask);
}

/** `skip`: acts before the store (the route narrowed to the limits a call does not skip). */
export const skipPolicy: LimitPolicy<'skip'> = {
  options: ['skip'],
  refusedOnConcurrency: {
    skip: 'is not supported on a concurrency limit; use @SkipRateLimit(name) on the routes it should not apply to',
  },
  appliesTo: (limit) => limit.skip !== undefined,
  resolve: (options, _draft, _context, fail) => ({ skip: resolveSkip(options.skip, fail) }),
};
