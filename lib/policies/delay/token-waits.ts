import { BurstLog } from '../../observability/burst-log.js';
import type { RateLimitEngine } from '../../engine/rate-limit-engine.js';
import type { CompiledRoute } from '../../routes/compiled-route.js';
import type { ConsumeResult, RateLimitCheck } from '../../store/rate-limit-store.interface.js';
import type { RequestResponse } from '../../transports/rate-limit-transport.interface.js';
import { MAX_WAITING_PER_KEY, type Wait, type WaitQueue } from './wait-queue.js';

/**
 * The guard's side of `maxDelay`: admitted requests that reserved a token
 * wait for it in one {@link WaitQueue}; a client that goes away gives its
 * tokens back; past the queue's bound, or its key's share of it
 * (`MAX_WAITING_PER_KEY`), a request is refused (and what it reserved given
 * back), said once per burst of each kind.
 */
export class TokenWaits {
  private readonly queue: WaitQueue;
  private readonly refusals: BurstLog;

  constructor(
    private readonly engine: RateLimitEngine,
    warn: (message: string) => void,
  ) {
    this.queue = engine.waits;
    this.refusals = new BurstLog(warn);
  }

  /** A place in the queue for `waitMs` of `key`'s, or `undefined` when it (or the key's share) is full. */
  enqueue(waitMs: number, key: string | undefined): Wait | undefined {
    return this.queue.wait(waitMs, key);
  }

  /**
   * Resolves `true` when the wait is over, `false` if the client went away
   * first (its `checks` are refunded), including before the wait began,
   * while the store call was in flight (the transport answers at once then).
   */
  waitFor(
    route: CompiledRoute,
    exchange: RequestResponse,
    queued: Wait,
    checks: readonly RateLimitCheck[],
  ): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const stopWatching = route.transport.onClientGone?.(exchange, () => {
        queued.cancel();
        this.engine.refundCharged(checks);
        resolve(false);
      });
      void queued.done.then(() => {
        stopWatching?.();
        resolve(true);
      });
    });
  }

  /**
   * The queue is full, or the key has its share of it: the request is denied
   * (retry when its wait would be over) and its `checks` refunded.
   */
  refuse(
    route: CompiledRoute,
    result: ConsumeResult,
    waitMs: number,
    checks: readonly RateLimitCheck[],
    key: string | undefined,
  ): ConsumeResult {
    this.engine.refundCharged(checks);
    if (this.queue.fullFor(key) === 'key') {
      // One line per burst for every key at its cap (never the key itself: it may identify a person).
      this.refusals.occurred('maxDelay per key', 10_000, () => ({
        first: `RateLimit: ${route.routeId}: ${MAX_WAITING_PER_KEY} requests of one key are waiting for a token (maxDelay), the most one key may hold in a process; this one is refused. Later refusals are counted and said when this burst ends.`,
        summary: (count) =>
          `RateLimit: ${count} request(s) refused in the last burst because their key had ${MAX_WAITING_PER_KEY} waiting for a token (maxDelay).`,
      }));
    } else {
      this.refusals.occurred('maxDelay', 10_000, () => ({
        first: `RateLimit: ${route.routeId}: ${this.queue.size} requests are waiting for a token (maxDelay), the most one process holds; this one is refused. Later refusals are counted and said when this burst ends.`,
        summary: (count) =>
          `RateLimit: ${count} request(s) refused in the last burst because too many were waiting for a token (maxDelay).`,
      }));
    }
    const decisions = result.decisions.map((decision) =>
      decision.allowed
        ? { ...decision, allowed: false, retryAfterMs: waitMs, reason: 'limit' as const }
        : decision,
    );
    return { allowed: false, decisions };
  }

  /** Module shutdown: the refusal count is said (the limiter releases the waiting requests). */
  close(): void {
    this.refusals.flush();
  }
}
