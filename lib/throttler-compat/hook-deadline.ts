import { Logger, ServiceUnavailableException } from '@nestjs/common';
import { systemClock, type RateLimitClock } from '../clock.js';
import { DYNAMIC_LIMIT_TIMEOUT_MS } from '../policies/dynamic-limit.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import { withDeadline } from '../util/with-deadline.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';

/**
 * A user hook that did not answer in time (`getTracker`, a `limit`/`ttl`/
 * `blockDuration` function), or a limit, ttl or blockDuration that is not a
 * number: decided by `failMode` and said once, since every request of the
 * route would otherwise log it (Nest logs each 500). @internal
 */
export class ThrottlerHookFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ThrottlerHookFailure';
  }
}

const timedOut = (hook: string) =>
  new ThrottlerHookFailure(`${hook} did not answer within ${DYNAMIC_LIMIT_TIMEOUT_MS} ms`);

/**
 * Bounds the asynchronous hooks of the compat guard as the native guard bounds
 * its dynamic limits (`DYNAMIC_LIMIT_TIMEOUT_MS` of the module's clock): a
 * hook that never answers (a lookup without a timeout) must not hold the
 * request, and its memory, forever. Throttler itself waits forever; a hook
 * that throws is left as throttler leaves it (the error reaches Nest).
 * @internal
 */
export class HookDeadline {
  /** Throttler names already said: one line per throttler for the process, never per request. */
  private readonly said = new Set<string>();

  constructor(
    private readonly clock: RateLimitClock = systemClock,
    private readonly failMode: FailMode = 'open',
    private readonly logger: Logger = new Logger('ThrottlerGuard'),
  ) {}

  /** `value` as it is when synchronous; a promise within the deadline. */
  bound<T>(value: T | Promise<T>, hook: string): T | Promise<T> {
    if (!isPromiseLike(value)) return value;
    return withDeadline(Promise.resolve(value), this.clock, DYNAMIC_LIMIT_TIMEOUT_MS, () =>
      timedOut(hook),
    );
  }

  /**
   * A failed hook decided as the native module decides a failing limit
   * function, by `failMode`: `'closed'` answers 503, otherwise this throttler
   * admits. Said once per throttler name (names come from the configuration).
   */
  decide(failure: ThrottlerHookFailure, throttlerName: string): true {
    if (!this.said.has(throttlerName)) {
      this.said.add(throttlerName);
      this.logger.error(
        `Throttler "${throttlerName}": ${failure.message}; failMode '${this.failMode}' decides (said once per throttler).`,
      );
    }
    if (this.failMode === 'closed')
      throw new ServiceUnavailableException('Rate limiting is temporarily unavailable', {
        cause: failure,
      });
    return true;
  }
}
