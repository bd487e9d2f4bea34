/**
 * Calendar-aligned windows: a day starts at midnight and a month on the 1st,
 * in a time zone, so a day lasts 23, 24 or 25 hours where daylight saving
 * moves the clocks. Boundaries come from `Intl.DateTimeFormat` (the time
 * zone database of the runtime), never from a fixed offset.
 *
 * Pure apart from a cache: the window last computed per alignment object is
 * kept, since formatting a date costs microseconds and a limit's requests
 * fall in the same window for a whole day.
 */
import type { CalendarAlignment } from '../store/rate-limit-store.interface.js';

/** A window `[start, end)`, milliseconds since the epoch. */
export interface WindowBounds {
  readonly start: number;
  readonly end: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Far enough past a start to be inside the next unit (days: 23-25 h; months: at most 31 days and an hour). */
const NEXT_UNIT_HINT_MS: Readonly<Record<CalendarAlignment['unit'], number>> = {
  day: 26 * HOUR_MS,
  month: 32 * DAY_MS,
};

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/**
 * The problem with a time zone name, or `undefined` when the runtime knows
 * it (checked at start-up, so that a typo is not found at the first request).
 */
export function timeZoneProblem(timeZone: unknown): string | undefined {
  if (typeof timeZone !== 'string' || timeZone === '')
    return "must be an IANA time zone name such as 'UTC' or 'Europe/Paris'";
  try {
    formatter(timeZone);
    return undefined;
  } catch {
    return 'is not a time zone this runtime knows (Intl.DateTimeFormat refused it)';
  }
}

/**
 * The wall clock at instant `t` (whole seconds) in `timeZone`, as the
 * instant a UTC clock shows the same date and time: `wall - t` is the zone's
 * offset at `t`.
 */
function wallClock(t: number, timeZone: string): number {
  const parts = formatter(timeZone).formatToParts(new Date(t));
  const field = (type: Intl.DateTimeFormatPartTypes): number =>
    Number(parts.find((part) => part.type === type)!.value);
  const year = field('year');
  const wall = Date.UTC(
    year,
    field('month') - 1,
    field('day'),
    field('hour'),
    field('minute'),
    field('second'),
  );
  // Date.UTC maps years 0-99 to 1900-1999.
  return year < 100 ? new Date(wall).setUTCFullYear(year) : wall;
}

/** The start of the day or month (as a wall clock) that the wall clock `wall` is in. */
function unitStartWall(wall: number, unit: CalendarAlignment['unit']): number {
  if (unit === 'day') return Math.floor(wall / DAY_MS) * DAY_MS;
  const date = new Date(wall);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/**
 * The first instant whose wall clock is at or after `targetWall`, near
 * `hint`. Two candidates: `targetWall` less the offset at the hint, and less
 * the offset at that first guess; they differ only when a transition lies
 * between, and then the earliest one that reaches the target is the start
 * (where midnight does not exist, the day starts at the transition).
 */
function instantOf(targetWall: number, hint: number, timeZone: string): number {
  const seconds = (t: number): number => Math.floor(t / 1000) * 1000;
  const first = targetWall - (wallClock(seconds(hint), timeZone) - seconds(hint));
  const second = targetWall - (wallClock(first, timeZone) - first);
  const candidates = [first, second].filter((t) => wallClock(t, timeZone) >= targetWall);
  return candidates.length === 0 ? Math.max(first, second) : Math.min(...candidates);
}

/** The start of the calendar unit containing `t`. */
function unitStart(t: number, calendar: CalendarAlignment): number {
  const wall = wallClock(Math.floor(t / 1000) * 1000, calendar.timeZone);
  return instantOf(unitStartWall(wall, calendar.unit), t, calendar.timeZone);
}

const cache = new WeakMap<CalendarAlignment, WindowBounds>();

/** The calendar window (day or month in the zone) that contains `now`. */
export function calendarWindow(now: number, calendar: CalendarAlignment): WindowBounds {
  const cached = cache.get(calendar);
  if (cached !== undefined && cached.start <= now && now < cached.end) return cached;
  let start = unitStart(now, calendar);
  // A start past now can only come from a zone whose clocks went back across
  // the boundary; the window before it then holds now.
  if (start > now) start = unitStart(start - 1, calendar);
  const end = unitStart(start + NEXT_UNIT_HINT_MS[calendar.unit], calendar);
  const bounds = { start, end };
  cache.set(calendar, bounds);
  return bounds;
}

/**
 * The boundaries around `now`: the window before the current one, the
 * current one, and the next (`[b0, b1, b2, b3]`, current = `[b1, b2)`). The
 * Redis scripts get these, since Lua has no time zone database; with Redis
 * server time the script picks the one of the three windows its own clock
 * is in, so clocks that disagree by less than a window still agree on
 * boundaries.
 */
export function calendarBoundaries(
  now: number,
  calendar: CalendarAlignment,
): readonly [number, number, number, number] {
  const cached = boundariesCache.get(calendar);
  if (cached !== undefined && cached[1] <= now && now < cached[2]) return cached;
  const current = calendarWindow(now, calendar);
  const before = unitStart(current.start - 1, calendar);
  const after = unitStart(current.end + NEXT_UNIT_HINT_MS[calendar.unit], calendar);
  const boundaries = [before, current.start, current.end, after] as const;
  boundariesCache.set(calendar, boundaries);
  return boundaries;
}

const boundariesCache = new WeakMap<CalendarAlignment, readonly [number, number, number, number]>();
