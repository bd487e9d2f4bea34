import type { CompiledRoute } from './compiled-route.js';
import { enforcedLimits } from './enforced-limits.js';

/** Routes narrowed by skip mask, per route: a route has few limits, so few masks. */
const narrowedRoutes = new WeakMap<CompiledRoute, Map<number, CompiledRoute>>();
/** Past this many masks for one route (only if predicates combine wildly), narrowed routes are built per call. */
const MAX_MASKS_PER_ROUTE = 64;

/**
 * The route without the limits of `mask` (bit `i` for `route.limits[i]`):
 * the same path then charges, reports and writes headers for the others
 * only, under their own fail mode. Derived by the function that compiled the
 * route, built once per mask.
 *
 * @internal
 */
export function narrowRoute(route: CompiledRoute, mask: number): CompiledRoute {
  let byMask = narrowedRoutes.get(route);
  const cached = byMask?.get(mask);
  if (cached) return cached;
  const kept = route.limits.filter((_limit, i) => (mask & (1 << i)) === 0);
  const late = route.limits.filter(
    (_limit, i) => i >= route.afterRouteGuards && (mask & (1 << i)) === 0,
  ).length;
  const narrowed: CompiledRoute = { ...route, ...enforcedLimits(kept, late, route.moduleFailMode) };
  if (!byMask) narrowedRoutes.set(route, (byMask = new Map()));
  if (byMask.size < MAX_MASKS_PER_ROUTE) byMask.set(mask, narrowed);
  return narrowed;
}
