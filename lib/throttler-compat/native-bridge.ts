import type { ExecutionContext, Type } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import { publishDecisionEvent } from '../observability/rate-limit-channels.js';
import { RATE_LIMIT_METADATA } from '../rate-limit.constants.js';
import type { ThrottlerStorageRecord } from './throttler-storage.interface.js';
import type { StoreAnswer } from './throttler-storage.service.js';

/**
 * Where the compat guard meets `RateLimitModule` in one application.
 *
 * A route (or its controller) with `@RateLimit()` is the native module's:
 * the compat guard leaves it alone, so that a controller moved from
 * `@Throttle()` to `@RateLimit()` is charged once, by the native guard, and
 * the others stay throttler's. (The native module's own `defaults` and
 * module-wide `limits` apply to every route: while both modules run, keep
 * module-wide limits in `ThrottlerModule` only; docs/migrating-from-throttler.md.)
 */
export function hasNativeLimits(
  reflector: Reflector,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- what ExecutionContext.getHandler() gives
  handler: Function,
  classRef: Type<unknown>,
): boolean {
  const declared = reflector.getAllAndOverride<unknown[] | undefined>(RATE_LIMIT_METADATA, [
    handler,
    classRef,
  ]);
  return declared !== undefined && declared.length > 0;
}

/**
 * One throttler's decision on `nestjs-holdup:decision`, what the module's
 * metrics count (requests by result, near the limit), under the owner of
 * `RateLimitModule` when it runs in the app (its metrics count only their
 * module's). Only called while someone listens. A denial under `failMode: 'closed'` is a store failure
 * (counted there): the storage throws before the guard sees a record.
 */
export function publishThrottlerDecision(
  context: ExecutionContext,
  name: string,
  limit: number,
  record: ThrottlerStorageRecord,
  answer: StoreAnswer | undefined,
  owner: RateLimitOwner | undefined,
): void {
  publishDecisionEvent({
    route: `${context.getClass().name}.${context.getHandler().name}`,
    transport: context.getType(),
    limits: [name],
    result: answer?.failed ? 'fail-open' : record.isBlocked ? 'denied' : 'admitted',
    bursts: [limit],
    decisions: answer?.decision === undefined ? [] : [answer.decision],
    owner,
  });
}
