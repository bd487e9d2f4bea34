import { calendarBoundaries } from '../../lib/algorithms/calendar-window.js';
import type { WindowLimit } from '../../lib/store/rate-limit-store.interface.js';

/**
 * A window's spec for the scripts (`scripts/window.lua.ts`). Calendar
 * boundaries are computed here from the caller's `now` (Lua has no time
 * zone database): the window before, the current one, and the next, so
 * that a script on Redis server time finds its own.
 *
 * @internal
 */
export function windowSpec(limit: WindowLimit, now: number): string {
  if (limit.algorithm === 'sliding-window') return `s${limit.windowMs}`;
  if (limit.anchor === 'first-hit') return `a${limit.windowMs}`;
  if (limit.calendar === undefined) return `f${limit.windowMs}`;
  return `c${calendarBoundaries(now, limit.calendar).join(',')}`;
}
