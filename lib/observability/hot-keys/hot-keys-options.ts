import { describeValue, optionError } from '../../errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../../errors/unknown-options.js';
import { parseDuration } from '../../limits/parse-duration.js';
import type {
  HotKeysOptions,
  ResolvedHotKeysOptions,
} from '../../interfaces/hot-keys-options.interface.js';

export const MAX_HOT_KEYS = 10_000;
const MIN_WINDOW_MS = 1_000;
const MAX_WINDOW_MS = 86_400_000;

const HOT_KEYS_OPTIONS = optionNames<HotKeysOptions>({
  size: true,
  window: true,
  windowMs: true, // deprecated: window
  log: true,
});
const LOG_OPTIONS = optionNames<{ top?: number }>({ top: true });

/**
 * Validates `hotKeys` at start-up; `undefined` when not enabled.
 * `deprecated(option, replacement)` is told of a deprecated name in use.
 */
export function resolveHotKeysOptions(
  given: boolean | HotKeysOptions | undefined,
  deprecated: (option: string, replacement: string) => void = () => undefined,
): ResolvedHotKeysOptions | undefined {
  const fail = (option: string, problem: string): never => {
    throw optionError('RateLimitModule', option, problem);
  };
  if (given === undefined || given === false) return undefined;
  const options: HotKeysOptions = given === true ? {} : given;
  if (options === null || typeof options !== 'object')
    fail('hotKeys', `must be true or { size?, window?, log? }, got ${describeValue(given)}`);
  rejectUnknownOptions('RateLimitModule', options, HOT_KEYS_OPTIONS, 'hotKeys.');
  const size = options.size ?? 100;
  if (!Number.isInteger(size) || size < 1 || size > MAX_HOT_KEYS)
    fail(
      'hotKeys.size',
      `must be an integer from 1 to ${MAX_HOT_KEYS}, got ${describeValue(size)}`,
    );
  let windowOption = 'hotKeys.window';
  let window = options.window;
  if (options.windowMs !== undefined) {
    if (window !== undefined)
      fail('hotKeys.windowMs', 'is the deprecated name of hotKeys.window: give only window');
    deprecated('hotKeys.windowMs', 'hotKeys.window');
    windowOption = 'hotKeys.windowMs';
    window = options.windowMs;
  }
  const windowMs = parseDuration(window ?? 60_000);
  if (windowMs === undefined || windowMs < MIN_WINDOW_MS || windowMs > MAX_WINDOW_MS) {
    fail(
      windowOption,
      `must be a duration from 1s to 1d (milliseconds or a string such as '5min'), got ${describeValue(window)}`,
    );
  }
  return { size, windowMs: windowMs!, logTop: resolveLogTop(options.log, size, fail) };
}

function resolveLogTop(
  log: HotKeysOptions['log'],
  size: number,
  fail: (option: string, problem: string) => never,
): number {
  if (log === undefined || log === false) return 0;
  if (log === true) return Math.min(10, size);
  if (log === null || typeof log !== 'object')
    fail('hotKeys.log', `must be a boolean or { top }, got ${describeValue(log)}`);
  rejectUnknownOptions('RateLimitModule', log, LOG_OPTIONS, 'hotKeys.log.');
  const top = log.top ?? 10;
  if (!Number.isInteger(top) || top < 1 || top > size)
    fail(
      'hotKeys.log.top',
      `must be an integer from 1 to hotKeys.size (${size}), got ${describeValue(top)}`,
    );
  return top;
}
