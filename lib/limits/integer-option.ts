import { describeValue } from '../errors/option-error.js';

/**
 * A count option checked at start-up: `value` if it is an integer in
 * `[low, high]`, else `fail(option, 'must be <what>, got <value>')`, which
 * throws. `what` says the range as the option's documentation does.
 */
export function integerOption(
  value: unknown,
  option: string,
  low: number,
  high: number,
  fail: (option: string, problem: string) => never,
  what = `an integer from ${low} to ${high}`,
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < low || value > high)
    fail(option, `must be ${what}, got ${describeValue(value)}`);
  return value as number;
}
