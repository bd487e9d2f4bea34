/**
 * Nest's `Logger` silenced for a test file or a `describe` block, what was
 * logged still readable: the module says store failures, skipped predicates,
 * shadow denials... through `new Logger('RateLimit')`, which tests should
 * neither print nor lose.
 *
 * ```ts
 * const logs = silenceRateLimitLogs();          // file level, or inside a describe
 * it('warns once', () => {
 *   ...
 *   expect(logs.messages('warn')).toEqual([expect.stringContaining('…')]);
 *   expect(logs.warn).toHaveBeenCalledTimes(1);  // the spies themselves, for jest's matchers
 * });
 * ```
 *
 * Spies on `Logger.prototype` (every level) from `beforeAll` to `afterAll`,
 * and forgets the calls before each test, so each test reads its own.
 */
import { afterAll, beforeAll, beforeEach, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';

export const LOG_LEVELS = ['error', 'warn', 'log', 'debug', 'verbose', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

type LogSpy = jest.Spied<(message: unknown, ...rest: unknown[]) => void>;

export interface CapturedLogs {
  readonly error: LogSpy;
  readonly warn: LogSpy;
  readonly log: LogSpy;
  readonly debug: LogSpy;
  readonly verbose: LogSpy;
  readonly fatal: LogSpy;
  /** The first argument of each call at `level` (every level when omitted), as strings, in order. */
  messages(level?: LogLevel): string[];
  /** Forgets the calls so far (done before each test already). */
  clear(): void;
}

export function silenceRateLimitLogs(): CapturedLogs {
  const spies = {} as Record<LogLevel, LogSpy>;
  /** Every call at every level, in order, for `messages()`. */
  let calls: { level: LogLevel; message: string }[] = [];
  beforeAll(() => {
    for (const level of LOG_LEVELS) {
      spies[level] = jest
        .spyOn(
          Logger.prototype as unknown as Record<
            LogLevel,
            (message: unknown, ...rest: unknown[]) => void
          >,
          level,
        )
        .mockImplementation((message) => {
          calls.push({ level, message: String(message) });
        });
    }
  });
  const clear = () => {
    calls = [];
    for (const level of LOG_LEVELS) spies[level]?.mockClear();
  };
  beforeEach(clear);
  afterAll(() => {
    for (const level of LOG_LEVELS) spies[level]?.mockRestore();
  });
  const spy = (level: LogLevel) => () => {
    const found = spies[level];
    if (!found)
      throw new Error(
        'silenceRateLimitLogs(): the spies exist from beforeAll on; read them inside a test or a hook',
      );
    return found;
  };
  const accessors = Object.fromEntries(LOG_LEVELS.map((level) => [level, spy(level)])) as Record<
    LogLevel,
    () => LogSpy
  >;
  return {
    get error() {
      return accessors.error();
    },
    get warn() {
      return accessors.warn();
    },
    get log() {
      return accessors.log();
    },
    get debug() {
      return accessors.debug();
    },
    get verbose() {
      return accessors.verbose();
    },
    get fatal() {
      return accessors.fatal();
    },
    messages: (level) =>
      calls
        .filter((call) => level === undefined || call.level === level)
        .map((call) => call.message),
    clear,
  };
}
