import type { ExecutionContext } from '@nestjs/common';
import type { ResolvedLimit } from './resolved-limit.js';

/** What one request costs under `limit`: its constant, or its cost function's answer, checked. */
export function costOf(limit: ResolvedLimit, context: ExecutionContext): number {
  return typeof limit.cost === 'number' ? limit.cost : dynamicCost(limit, context);
}

/** A cost above the burst is left to the algorithm: denied with a reason, without `Retry-After`. */
function dynamicCost(limit: ResolvedLimit, context: ExecutionContext): number {
  const cost = (limit.cost as (context: ExecutionContext) => number)(context);
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost <= 0) {
    throw new TypeError(
      `RateLimit: limit "${limit.name}": the cost function returned ${String(cost)}; it must return a positive number`,
    );
  }
  return cost;
}
