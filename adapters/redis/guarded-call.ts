import { RateLimitStoreError, toStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type { RedisClient } from './redis-client.interface.js';

/**
 * The store's rules for every call to Redis, and their counters: fail fast
 * when closed or not connected, reject after `timeoutMs`, wrap every failure
 * in `RateLimitStoreError`, swallow whatever comes after the caller got its
 * answer.
 */
export class GuardedCalls {
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
      return Promise.reject(new RateLimitStoreError(`RedisStore: ${operation} called after close()`));
    }
    const status = this.client.status;
    if (status !== undefined && status !== 'ready' && status !== 'wait') {
      this.errorCount++;
      return Promise.reject(new RateLimitStoreError(`RedisStore: ${operation} failed: Redis client is not ready (status "${status}")`));
    }
    let pending: Promise<T>;
    try {
      pending = work();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        // Check again after the poll phase: if the event loop was stalled
        // past the deadline, a reply may be sitting in the socket, and it
        // should win over a timeout that is only the stall's fault.
        setImmediate(() => {
          if (settled) return;
          settled = true;
          this.timeoutCount++;
          reject(new RateLimitStoreError(`RedisStore: ${operation} got no answer from Redis within ${timeoutMs} ms`));
        });
      }, timeoutMs);
      timer.unref();
      pending.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.errorCount++;
          reject(toStoreError(error, `RedisStore: ${operation} failed`));
        },
      );
    });
  }
}
