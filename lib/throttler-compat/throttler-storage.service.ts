import { Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { MemoryStore } from '../../adapters/memory/index.js';
import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import { systemClock, type RateLimitClock } from '../clock.js';
import { bucketCheck, bucketNamespace } from '../store/bucket-key.js';
import type {
  ConsumeResult,
  FixedWindowLimit,
  RateLimitStore,
} from '../store/rate-limit-store.interface.js';
import type { MaybePromise } from '../util/maybe-promise.js';
import type { ThrottlerStorage, ThrottlerStorageRecord } from './throttler-storage.interface.js';

/** Whether a `storage` option is one of this library's stores rather than a `ThrottlerStorage`. */
export function isRateLimitStore(value: unknown): value is RateLimitStore {
  const candidate = value as Partial<RateLimitStore> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.consume === 'function' &&
    typeof (candidate as { increment?: unknown }).increment !== 'function'
  );
}

/**
 * `@nestjs/throttler`'s storage contract on this library's stores: each
 * throttler is a fixed window anchored at a key's first hit (`anchor:
 * 'first-hit'`), charged through the store's all-or-nothing `consume`, and
 * a denial blocks the key for `blockDuration` through the store's `block`
 * (a retry during a block does not start it over). The math is the
 * library's (`fixedWindowConsume`, `anchoredWindowBlock`), not a copy.
 *
 * Anchored windows are known to the in-process store only (`MemoryStore`):
 * any other store is refused here, at start-up, naming the store to use.
 */
@Injectable()
export class ThrottlerStorageService implements ThrottlerStorage, OnApplicationShutdown {
  private readonly store: RateLimitStore;

  // Optional: `providers: [ThrottlerStorageService]`, as throttler allows, gets the defaults.
  constructor(@Optional() store?: RateLimitStore, @Optional() clock: RateLimitClock = systemClock) {
    if (store !== undefined && !(store instanceof MemoryStore))
      throw new TypeError(
        `ThrottlerModule: storage ${store.constructor?.name ?? typeof store} cannot count ` +
          `throttler windows (anchored at the first hit); pass a MemoryStore, a ` +
          `ThrottlerStorage, or move the routes to @RateLimit() to use it ` +
          `(docs/migrating-from-throttler.md)`,
      );
    this.store = store ?? new MemoryStore();
    this.owned = store === undefined;
    this.clock = clock;
  }

  private readonly clock: RateLimitClock;
  /** Closed at shutdown only when made here: a store given in `storage` is its owner's. */
  private readonly owned: boolean;

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const windowLimit: FixedWindowLimit = {
      algorithm: 'fixed-window',
      quota: Math.max(1, Math.floor(limit)),
      windowMs: Math.max(1, Math.ceil(ttl)),
      anchor: 'first-hit',
    };
    const check = bucketCheck(
      bucketNamespace('fixed-window', `throttler:${throttlerName}`),
      key,
      windowLimit,
      1,
    );
    const now = this.clock.now();
    const consumed = await this.store.consume({ checks: [check], now });
    const decision = consumed.decisions[0]!;
    if (consumed.allowed) return admittedRecord(windowLimit.quota, decision);
    let answer = decision;
    if (blockDuration > 0 && this.store.block !== undefined) {
      const blocked: ConsumeResult = await (this.store.block({
        checks: [{ ...check, durationMs: Math.ceil(blockDuration) }],
        now,
        unlessBlocked: true,
      }) as MaybePromise<ConsumeResult>);
      answer = blocked.decisions[0] ?? decision;
    }
    return {
      // Throttler counts the hit that went over (limit + 1), never the ones after it.
      totalHits: windowLimit.quota + 1,
      timeToExpire: seconds(answer.effectiveWindowMs ?? answer.resetMs),
      isBlocked: true,
      // Until the window (the block's, when blocked) ends: a peek of a full
      // window admits a cost of 0, so its retryAfterMs is 0, not the wait.
      timeToBlockExpire: Math.max(1, seconds(answer.effectiveWindowMs ?? answer.resetMs)),
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.owned) await this.store.close();
  }
}

function admittedRecord(quota: number, decision: RateLimitDecision): ThrottlerStorageRecord {
  return {
    totalHits: quota - decision.remaining,
    timeToExpire: seconds(decision.effectiveWindowMs ?? decision.resetMs),
    isBlocked: false,
    timeToBlockExpire: 0,
  };
}

/** Whole seconds, rounded up, as throttler reports `Reset` and `Retry-After`. */
function seconds(ms: number): number {
  return Number.isFinite(ms) ? Math.ceil(ms / 1000) : 0;
}
