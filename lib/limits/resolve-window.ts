import { timeZoneProblem } from '../algorithms/calendar-window.js';
import { describeValue } from '../errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../errors/unknown-options.js';
import type {
  CalendarOptions,
  Rate,
  RateLimitOptions,
} from '../interfaces/rate-limit-options.interface.js';
import type { StoreLimit, WindowLimit } from '../store/rate-limit-store.interface.js';
import { parseWindowRate } from './parse-rate.js';
import { MAX_HORIZON_MS } from '../store/horizon.js';

/** The algorithms a limit may name. */
export const ALGORITHMS = ['token-bucket', 'fixed-window', 'sliding-window'] as const;

const CALENDAR_OPTIONS = optionNames<CalendarOptions>({ timeZone: true });

/**
 * Options a window limit refuses, and why: each either has no meaning for a
 * window (there is no burst, no refill rate to adapt, smooth or block) or
 * is not implemented for windows.
 */
const REFUSED_WITH_WINDOWS: readonly (readonly [keyof RateLimitOptions, string])[] = [
  [
    'burst',
    "has no meaning for a window: the quota is the rate's count ('100/min' admits 100 per minute); remove burst",
  ],
  [
    'adaptive',
    "only works with algorithm 'token-bucket' (it moves a refill rate, which a window does not have)",
  ],
  [
    'maxDelay',
    "only works with algorithm 'token-bucket' (a window has no steady refill to wait for)",
  ],
  [
    'blockDuration',
    "only works with algorithm 'token-bucket' (a window cannot be blocked past its end)",
  ],
  [
    'settle',
    "only works with algorithm 'token-bucket' (a window has no refill to repay a debt with)",
  ],
];

/** The algorithm of a limit, validated (`'token-bucket'` by default). */
export function resolveAlgorithm(
  options: RateLimitOptions,
  fail: (option: string, problem: string) => never,
): (typeof ALGORITHMS)[number] {
  const algorithm = options.algorithm ?? 'token-bucket';
  if (!(ALGORITHMS as readonly unknown[]).includes(algorithm)) {
    fail(
      'algorithm',
      `must be 'token-bucket', 'fixed-window' or 'sliding-window', got ${describeValue(algorithm)}`,
    );
  }
  if (options.calendar !== undefined && algorithm !== 'fixed-window') {
    fail(
      'calendar',
      `only applies to algorithm 'fixed-window' (windows aligned on calendar days or months), got algorithm '${algorithm}'`,
    );
  }
  return algorithm;
}

/**
 * A window limit's store shape: `'N/<window>'` is N per window; a number is
 * N per second. Refuses what windows do not support (see
 * {@link REFUSED_WITH_WINDOWS}), a rate function, and calendar alignment
 * of anything but one day or one month.
 */
export function resolveWindow(
  options: RateLimitOptions,
  algorithm: WindowLimit['algorithm'],
  where: string,
  fail: (option: string, problem: string) => never,
): WindowLimit {
  for (const [option, problem] of REFUSED_WITH_WINDOWS)
    if (options[option] !== undefined) fail(option, `${problem} (algorithm '${algorithm}')`);
  if (typeof options.rate === 'function')
    fail('rate', `must be a fixed rate with algorithm '${algorithm}', not a function`);
  const parsed = parseWindowRate(options.rate as Rate);
  if (parsed === undefined) {
    fail(
      'rate',
      `must be a count per window such as '100/15min' or '1000/day' (a number is per second), got ${describeValue(options.rate)}`,
    );
  }
  const { quota, windowMs, unit } = parsed;
  if (quota < 1)
    fail(
      'rate',
      `must allow at least 1 per window with algorithm '${algorithm}', got ${describeValue(options.rate)}; use a longer window ('1/2s')`,
    );
  if (!Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > MAX_HORIZON_MS / 2) {
    fail(
      'rate',
      `must have a window of whole milliseconds, from 1 ms to ${MAX_HORIZON_MS / 2} ms, got ${describeValue(options.rate)}`,
    );
  }
  if (algorithm === 'sliding-window') {
    if (unit === 'month')
      fail(
        'rate',
        "can only count per month with algorithm 'fixed-window' and calendar: {} (a month has no fixed length)",
      );
    return Object.freeze({ algorithm, quota, windowMs });
  }
  if (options.calendar === undefined) {
    if (unit === 'month')
      fail(
        'rate',
        "can only count per month with calendar: {} (windows on calendar months); or write '/30d'",
      );
    return Object.freeze({ algorithm, quota, windowMs });
  }
  return Object.freeze({
    algorithm,
    quota,
    windowMs,
    calendar: resolveCalendar(options.calendar, unit, where, fail),
  });
}

function resolveCalendar(
  calendar: CalendarOptions,
  unit: 'day' | 'month' | 'other',
  where: string,
  fail: (option: string, problem: string) => never,
): NonNullable<Extract<StoreLimit, { algorithm: 'fixed-window' }>['calendar']> {
  if (calendar === null || typeof calendar !== 'object' || Array.isArray(calendar)) {
    fail(
      'calendar',
      `must be an object like { timeZone: 'Europe/Paris' }, got ${describeValue(calendar)}`,
    );
  }
  rejectUnknownOptions(where, calendar, CALENDAR_OPTIONS, 'calendar.');
  if (unit === 'other')
    fail(
      'rate',
      "must count per 'day' or per 'month' (no multiplier) with calendar: windows are calendar days or months",
    );
  const timeZone = calendar.timeZone ?? 'UTC';
  const problem = timeZoneProblem(timeZone);
  if (problem !== undefined)
    fail('calendar.timeZone', `${problem}, got ${describeValue(calendar.timeZone)}`);
  return Object.freeze({ unit: unit as 'day' | 'month', timeZone });
}
