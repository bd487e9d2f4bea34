import type { ExecutionContext } from '@nestjs/common';
import { describeValue } from '../errors/option-error.js';
import { capacityOf } from '../store/rate-limit-store.interface.js';
import { policyHeader } from '../headers/rate-limit-headers.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type { MaybePromise } from '../store/rate-limit-store.interface.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import type { SkipPredicate } from '../interfaces/rate-limit-options.interface.js';

/** Validate a `skip` option (a limit's or the module's). Throws through `fail`. */
export function resolveSkip(skip: unknown, fail: (option: string, problem: string) => never): SkipPredicate | undefined {
  if (skip === undefined) return undefined;
  if (typeof skip !== 'function') fail('skip', `must be a function (context) => boolean, got ${describeValue(skip)}`);
  return skip as SkipPredicate;
}

/**
 * Run a predicate so that it cannot stop the limiter from limiting: one that
 * throws or rejects does not skip (the limit applies), and `onError` is told.
 * Only a strict `true` skips.
 */
export function runSkip(skip: SkipPredicate, context: ExecutionContext, onError: (error: unknown) => void): MaybePromise<boolean> {
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
 * Which of the route's limits a call skips, as a bit mask (bit `i` for
 * `route.limits[i]`); synchronous while every predicate is.
 */
export function skippedLimits(route: CompiledRoute, context: ExecutionContext, onError: (limitName: string, error: unknown) => void): MaybePromise<number> {
  let mask = 0;
  let pending: Promise<void>[] | undefined;
  const { limits } = route;
  for (let i = 0; i < limits.length; i++) {
    const skip = limits[i]!.skip;
    if (skip === undefined) continue;
    const answer = runSkip(skip, context, (error) => onError(limits[i]!.name, error));
    if (answer === true) mask |= 1 << i;
    else if (answer !== false) (pending ??= []).push(answer.then((skipped) => void (skipped && (mask |= 1 << i))));
  }
  return pending === undefined ? mask : Promise.all(pending).then(() => mask);
}

/** Routes narrowed by skip mask, per route: a route has few limits, so few masks. */
const narrowedRoutes = new WeakMap<CompiledRoute, Map<number, CompiledRoute>>();
/** Past this many masks for one route (only if predicates combine wildly), narrowed routes are built per call. */
const MAX_MASKS_PER_ROUTE = 64;

/**
 * The route without the skipped limits: the same guard path then charges,
 * reports and writes headers for the others only. Built once per mask.
 */
export function narrowRoute(route: CompiledRoute, mask: number): CompiledRoute {
  let byMask = narrowedRoutes.get(route);
  const cached = byMask?.get(mask);
  if (cached) return cached;
  const kept: number[] = [];
  for (let i = 0; i < route.limits.length; i++) if ((mask & (1 << i)) === 0) kept.push(i);
  const limits = kept.map((i) => route.limits[i]!);
  const narrowed: CompiledRoute = {
    ...route,
    limits,
    buckets: kept.map((i) => route.buckets[i]!),
    limitNames: limits.map((limit) => limit.name),
    limitBursts: limits.map((limit) => capacityOf(limit.bucket)),
    afterRouteGuards: kept.filter((i) => i < route.afterRouteGuards).length,
    adaptiveNames: limits.filter((limit) => limit.adaptive).map((limit) => limit.name),
    reportsOutcome: limits.some((limit) => limit.adaptive !== undefined || limit.charge !== undefined),
    chargesByOutcome: limits.some((limit) => limit.charge !== undefined),
    delays: limits.some((limit) => limit.maxDelayMs > 0),
    staticPolicy: route.staticPolicy === undefined ? undefined : policyHeader(limits),
    skips: false,
  };
  if (!byMask) narrowedRoutes.set(route, (byMask = new Map()));
  if (byMask.size < MAX_MASKS_PER_ROUTE) byMask.set(mask, narrowed);
  return narrowed;
}
