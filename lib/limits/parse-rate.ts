import type { Rate } from '../interfaces/rate-limit-options.interface.js';

/** Milliseconds per unit, for rates and durations. */
export const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

const RATE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)?\s*([a-z]+)\s*$/i;

/**
 * Turn a declared rate into tokens per second, or `undefined` when it is not
 * a positive finite rate (the caller names the option in the error).
 */
export function parseRate(rate: Rate): number | undefined {
  if (typeof rate === 'number') return Number.isFinite(rate) && rate > 0 ? rate : undefined;
  if (typeof rate !== 'string') return undefined;
  const match = RATE_PATTERN.exec(rate);
  if (!match) return undefined;
  const [, tokens, multiplier, unit] = match;
  const unitMs = UNIT_MS[unit!.toLowerCase()];
  if (unitMs === undefined) return undefined;
  const periodMs = unitMs * (multiplier === undefined ? 1 : Number(multiplier));
  const perSecond = (Number(tokens) * 1000) / periodMs;
  return Number.isFinite(perSecond) && perSecond > 0 ? perSecond : undefined;
}

/**
 * The count a string rate is written with: `'100/min'` and `'100/15min'` give
 * 100; `undefined` for a number (or anything that is not such a string). A
 * token bucket's default burst when the rate is a string.
 */
export function rateCount(rate: Rate): number | undefined {
  if (typeof rate !== 'string') return undefined;
  const match = RATE_PATTERN.exec(rate);
  return match ? Number(match[1]) : undefined;
}

/** A rate read as a window's quota: `quota` per `windowMs`. */
export interface WindowRate {
  readonly quota: number;
  /** Window length in milliseconds (a month: 30 days, nominal). */
  readonly windowMs: number;
  /** The unit as written, normalised: `'day'` and `'month'` (with no multiplier) can be calendar-aligned. */
  readonly unit: 'day' | 'month' | 'other';
}

/** Month units: only for calendar-aligned fixed windows (a month has no fixed length). */
const MONTH_UNITS: ReadonlySet<string> = new Set(['mo', 'month', 'months']);
const NOMINAL_MONTH_MS = 30 * 86_400_000;

/**
 * Read a declared rate as a window algorithm does: `'100/15min'` is 100 per
 * window of 15 minutes, and a number is that many per second (a 1 s window).
 * `undefined` when it is not such a rate (the caller names the option).
 */
export function parseWindowRate(rate: Rate): WindowRate | undefined {
  if (typeof rate === 'number')
    return Number.isFinite(rate) && rate > 0
      ? { quota: rate, windowMs: 1000, unit: 'other' }
      : undefined;
  if (typeof rate !== 'string') return undefined;
  const match = RATE_PATTERN.exec(rate);
  if (!match) return undefined;
  const [, tokens, multiplier, written] = match;
  const unit = written!.toLowerCase();
  const quota = Number(tokens);
  const times = multiplier === undefined ? 1 : Number(multiplier);
  if (MONTH_UNITS.has(unit))
    return { quota, windowMs: NOMINAL_MONTH_MS * times, unit: times === 1 ? 'month' : 'other' };
  const unitMs = UNIT_MS[unit];
  if (unitMs === undefined) return undefined;
  const day = unitMs === 86_400_000 && times === 1;
  return { quota, windowMs: unitMs * times, unit: day ? 'day' : 'other' };
}
