import { RateLimitStoreError, toStoreError } from '../../lib/errors/rate-limit-store.error.js';
import { Deadlines, type Waiting } from './deadlines.js';
import type { RedisClient } from './redis-client.interface.js';

/**
 * The store's rules for every call to Redis, and their counters: fail fast
 * when closed or not connected, reject after `timeoutMs`, wrap every failure
 * in `RateLimitStoreError`, swallow whatever comes after the caller got its
 * answer. The deadlines of all calls share one timer ({@link Deadlines}).
 */
export class GuardedCalls {
  private readonly deadlines = new Deadlines();
  private closed = false;
  private callCount = 0;
  private timeoutCount = 0;
  private errorCount = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly timeoutMs: number,
  ) {}

  /** Calls asked (closed, refused and failed ones included). */
  get calls(): number {
    return this.callCount;
  }

  /** Calls rejected because Redis did not answer within `timeoutMs`. */
  get timeouts(): number {
    return this.timeoutCount;
  }

  /** Calls rejected for any other reason. */
  get errors(): number {
    return this.errorCount;
  }

  /** Every later call fails fast. */
  close(): void {
    this.closed = true;
  }

  /**
   * Runs `work` under the rules above. `work` starts at once (synchronously);
   * `operation` names the call in error messages. `timeoutMs`: a shorter
   * deadline for this call (what is left of a caller's own).
   */
  run<T>(operation: string, work: () => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    this.callCount++;
    if (this.closed) {
      this.errorCount++;
      return Promise.reject(
        new RateLimitStoreError(`RedisStore: ${operation} called after close()`),
      );
    }
    const status = this.client.status;
    if (status !== undefined && status !== 'ready' && status !== 'wait') {
      this.errorCount++;
      return Promise.reject(
        new RateLimitStoreError(
          `RedisStore: ${operation} failed: Redis client is not ready (status "${status}")`,
        ),
      );
    }
    let pending: Promise<T>;
    try {
      pending = work();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const call: Waiting = {
        previous: undefined,
        next: undefined,
        deadline: performance.now() + timeoutMs,
        expire: () => {
          if (settled) return;
          settled = true;
          this.timeoutCount++;
          reject(
            new RateLimitStoreError(
              `RedisStore: ${operation} got no answer from Redis within ${timeoutMs} ms`,
            ),
          );
        },
      };
      this.deadlines.add(call);
      pending.then(
        (value) => {
          if (settled) return;
          settled = true;
          this.deadlines.remove(call);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          this.deadlines.remove(call);
          this.errorCount++;
          reject(toStoreError(error, `RedisStore: ${operation} failed`));
        },
      );
    });
  }
}
