import { UNIT_MS } from './parse-rate.js';

const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i;

/**
 * A duration in milliseconds: a positive number of milliseconds, or a string
 * with the units of a rate (`'500ms'`, `'15min'`, `'1h'`, `'1d'`);
 * `undefined` when it is neither (the caller names the option).
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = DURATION_PATTERN.exec(value);
  const unitMs = match ? UNIT_MS[match[2]!.toLowerCase()] : undefined;
  if (!match || unitMs === undefined) return undefined;
  const ms = Number(match[1]) * unitMs;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}
