/**
 * Fixed window: one counter per window; a request is admitted when the
 * window's count plus its cost stays within the quota. Windows are aligned
 * on multiples of `windowMs` since the Unix epoch (so every process and the
 * Redis script agree on them without talking), or on calendar boundaries in
 * a time zone (`calendar-window.ts`).
 *
 * What it guarantees: at most `quota` per window, exactly. What it does not:
 * a caller may take `quota` at the end of one window and `quota` again at
 * the start of the next, so up to `2 x quota` within any `windowMs` that
 * straddles an edge (docs/algorithms.md).
 *
 * Pure: state, time (absolute ms) and limit in, state and decision out. The
 * Redis script (`adapters/redis/scripts/fixed-window.lua.ts`) implements the
 * same arithmetic and runs the same scenario table (test/utils/window-scenarios.ts).
 */
import type { FixedWindowLimit } from '../store/rate-limit-store.interface.js';
import { calendarWindow, type WindowBounds } from './calendar-window.js';
import type { RateLimitDecision } from './rate-limit-decision.js';
import { WINDOW_EPSILON, wholeLeft, type WindowOutcome, type WindowState } from './window-state.js';

/** The window containing `now`: epoch-aligned, or the calendar day or month. */
export function fixedWindowBounds(now: number, limit: FixedWindowLimit): WindowBounds {
  if (limit.calendar !== undefined) return calendarWindow(now, limit.calendar);
  if (limit.anchor === 'first-hit') return { start: now, end: now + limit.windowMs };
  const start = Math.floor(now / limit.windowMs) * limit.windowMs;
  return { start, end: start + limit.windowMs };
}

/**
 * Charge `cost` at `now`. The stored state counts when it belongs to the
 * current window; a stored window later than the current one (the clock went
 * back) is kept as the current one, so time running backwards never opens a
 * fresh window, and waits are measured from the real `now` to its end: never
 * shorter than needed.
 *
 * Decision fields: `remaining` = whole requests left in this window;
 * `retryAfterMs` = until the window ends (when denied: the next window admits
 * any cost up to the quota), `Infinity` when the cost exceeds the quota;
 * `resetMs` = until the count starts over (0 when nothing is counted);
 * `effectiveWindowMs` = until the window ends.
 */
export function fixedWindowConsume(
  state: WindowState | undefined,
  now: number,
  limit: FixedWindowLimit,
  cost: number,
): WindowOutcome {
  let { start, end } = fixedWindowBounds(now, limit);
  let count = 0;
  if (state !== undefined && isCurrent(state, start, now, limit)) {
    start = state.start;
    end = state.end;
    count = state.count;
  }
  const untilEnd = end - now;
  const current: WindowState = { start, end, count, previous: 0, expires: end };
  if (cost > limit.quota + WINDOW_EPSILON) {
    return {
      state: current,
      decision: windowDecision(
        false,
        limit.quota,
        count,
        Number.POSITIVE_INFINITY,
        untilEnd,
        'cost-exceeds-burst',
      ),
    };
  }
  if (count + cost <= limit.quota + WINDOW_EPSILON) {
    const charged = count + cost;
    return {
      state: { start, end, count: charged, previous: 0, expires: end },
      decision: windowDecision(true, limit.quota, charged, 0, untilEnd),
    };
  }
  return {
    state: current,
    decision: windowDecision(false, limit.quota, count, untilEnd, untilEnd, 'limit'),
  };
}

/**
 * Whether the stored window is the one `now` falls in. Aligned windows: it
 * starts at or after the current bounds (later: the clock went back).
 * Anchored windows have no bounds of their own: the stored one counts until
 * its end (a block's end included).
 */
function isCurrent(
  state: WindowState,
  start: number,
  now: number,
  limit: FixedWindowLimit,
): boolean {
  return limit.anchor === 'first-hit' ? state.end > now : state.start >= start;
}

/**
 * A block (a penalty) on a window anchored at its first hit, as
 * `@nestjs/throttler` blocks: full until `now + durationMs`, whatever was
 * left of the window (shorter or longer), then a fresh window at the next
 * request. Whether a block already running is left alone (a retry during
 * it) is the store's call (`unlessBlocked`), as for a token bucket.
 */
export function anchoredWindowBlock(
  now: number,
  limit: FixedWindowLimit,
  durationMs: number,
): WindowState {
  const end = now + durationMs;
  return { start: now, end, count: limit.quota, previous: 0, expires: end };
}

function windowDecision(
  allowed: boolean,
  quota: number,
  count: number,
  retryAfterMs: number,
  untilEnd: number,
  reason?: RateLimitDecision['reason'],
): RateLimitDecision {
  const decision = {
    allowed,
    remaining: wholeLeft(quota, count),
    retryAfterMs,
    resetMs: count > WINDOW_EPSILON ? untilEnd : 0,
    effectiveWindowMs: untilEnd,
  };
  return reason === undefined ? decision : { ...decision, reason };
}

/** The window as it stands at `now`, without charging (the decision of a cost of 0). */
export function fixedWindowPeek(
  state: WindowState | undefined,
  now: number,
  limit: FixedWindowLimit,
): RateLimitDecision {
  return fixedWindowConsume(state, now, limit, 0).decision;
}
