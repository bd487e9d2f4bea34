import type { ExecutionContext } from '@nestjs/common';
import type { RequestLike } from '../keys/key-strategy.js';
import { costOf } from '../limits/limit-cost.js';
import { bucketCheck } from '../store/bucket-key.js';
import type {
  MaybePromise,
  RateLimitCheck,
  StoreLimit,
} from '../store/rate-limit-store.interface.js';
import type { CompiledRoute } from './compiled-route.js';

/**
 * One check per limit from `from` to `to`. Synchronous while every key is;
 * from the first key that answers with a promise on, the rest is awaited in
 * order, so a synchronous route never creates a promise.
 */
export function buildChecks(
  context: ExecutionContext,
  route: CompiledRoute,
  from: number,
  to: number,
  request: unknown,
  buckets: readonly StoreLimit[],
): MaybePromise<RateLimitCheck[]> {
  const checks: RateLimitCheck[] = new Array(to - from);
  for (let i = from; i < to; i++) {
    const limit = route.limits[i]!;
    const identity = limit.identify(context, request as RequestLike | undefined);
    if (typeof identity !== 'string')
      return checksAfterKey(context, route, i, to, request, buckets, checks, identity, from);
    checks[i - from] = bucketCheck(limit.namespace, identity, buckets[i]!, costOf(limit, context));
  }
  return checks;
}

async function checksAfterKey(
  context: ExecutionContext,
  route: CompiledRoute,
  at: number,
  to: number,
  request: unknown,
  buckets: readonly StoreLimit[],
  checks: RateLimitCheck[],
  pendingIdentity: Promise<string>,
  from: number,
): Promise<RateLimitCheck[]> {
  let identity: MaybePromise<string> = pendingIdentity;
  for (let i = at; i < to; i++) {
    const limit = route.limits[i]!;
    if (i > at) identity = limit.identify(context, request as RequestLike | undefined);
    checks[i - from] = bucketCheck(
      limit.namespace,
      await identity,
      buckets[i]!,
      costOf(limit, context),
    );
  }
  return checks;
}
