import {
  Injectable,
  Optional,
  ServiceUnavailableException,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { MemoryStore } from '../../adapters/memory/index.js';
import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import { systemClock, type RateLimitClock } from '../clock.js';
import { RateLimitEngine } from '../engine/rate-limit-engine.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import { boundedIdentity } from '../keys/bounded-key.js';
import { bucketCheck, bucketNamespace } from '../store/bucket-key.js';
import type {
  ConsumeResult,
  FixedWindowLimit,
  RateLimitStore,
} from '../store/rate-limit-store.interface.js';
import type { ThrottlerStorage, ThrottlerStorageRecord } from './throttler-storage.interface.js';

export { isRateLimitStore } from './compat-options.js';

/**
 * What `ThrottlerStorageService` adds to throttler's record, for the guard:
 * the store's decision (draft headers, metrics), or the store's failure
 * under `failMode: 'open'` (no headers: nothing is known). @internal
 */
export const STORE_ANSWER = Symbol('nestjs-holdup:throttler-store-answer');

/** @internal */
export interface StoreAnswer {
  readonly decision?: RateLimitDecision;
  readonly failed?: true;
}

/**
 * `@nestjs/throttler`'s storage contract on this library's engine and
 * stores: each throttler is a fixed window anchored at a key's first hit
 * (`anchor: 'first-hit'`), charged through `RateLimitEngine.consume` (the
 * store's all-or-nothing `consume`), and a denial blocks the key for
 * `blockDuration` through the engine's `applyBlocks` (a retry during a block
 * does not start it over). The math is the library's (`fixedWindowConsume`,
 * `anchoredWindowBlock`, and their Lua on Redis), not a copy.
 *
 * Every store works: `MemoryStore` (the default), `RedisStore` (standalone
 * or Cluster), `TwoTierStore` (windows go straight to Redis: no lease).
 * A store failure is the engine's: logged once per outage, then resolved by
 * `failMode` (`'open'` admits, `'closed'` answers 503, `'local'` decides on
 * the store's local tier).
 */
@Injectable()
export class ThrottlerStorageService implements ThrottlerStorage, OnApplicationShutdown {
  /** The engine the native guard uses: failures logged and published, `failMode: 'local'`. */
  readonly engine: RateLimitEngine;

  // Optional: `providers: [ThrottlerStorageService]`, as throttler allows, gets the defaults.
  constructor(
    @Optional() store?: RateLimitStore,
    @Optional() clock: RateLimitClock = systemClock,
    @Optional() private readonly failMode: FailMode = 'open',
    @Optional() owner?: RateLimitOwner,
  ) {
    // owner: RateLimitModule's, when it runs in the app, so that its metrics count these calls.
    this.engine = new RateLimitEngine(store ?? new MemoryStore(), clock, { failMode, owner });
  }

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
      // Bounded as the native module bounds identities: a generateKey that
      // keeps a client's tracker raw (a 15 kB header) must not make a 15 kB key.
      boundedIdentity(key),
      windowLimit,
      1,
    );
    const engine = this.engine;
    let now: number;
    let consumed: ConsumeResult;
    try {
      now = engine.now();
      consumed = await engine.consume({ checks: [check], now }, this.failMode);
    } catch (error) {
      // Logged once per outage by the engine; 'local' never gets here (decided locally).
      if (this.failMode === 'closed')
        throw new ServiceUnavailableException('Rate limiting is temporarily unavailable', {
          cause: error,
        });
      return withAnswer(
        { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 },
        { failed: true },
      );
    }
    const decision = consumed.decisions[0]!;
    if (consumed.allowed) return admittedRecord(windowLimit.quota, decision);
    let answer = decision;
    if (blockDuration > 0) {
      const blocked = await engine.applyBlocks(
        [{ ...check, durationMs: Math.ceil(blockDuration) }],
        now,
      );
      // undefined: the store failed (logged); the key is then denied, not blocked.
      answer = blocked?.decisions[0] ?? decision;
    }
    const waitMs = answer.effectiveWindowMs ?? answer.resetMs;
    return withAnswer(
      {
        // Throttler counts the hit that went over (limit + 1), never the ones after it.
        totalHits: windowLimit.quota + 1,
        timeToExpire: seconds(waitMs),
        isBlocked: true,
        // Until the window (the block's, when blocked) ends: a peek of a full
        // window admits a cost of 0, so its retryAfterMs is 0, not the wait.
        timeToBlockExpire: Math.max(1, seconds(waitMs)),
      },
      { decision: { ...answer, allowed: false, remaining: 0, retryAfterMs: waitMs } },
    );
  }

  /** Closes the store, as `RateLimitModule` closes its own (stores' `close` is idempotent). */
  async onApplicationShutdown(): Promise<void> {
    await this.engine.onApplicationShutdown();
  }
}

function admittedRecord(quota: number, decision: RateLimitDecision): ThrottlerStorageRecord {
  return withAnswer(
    {
      totalHits: quota - decision.remaining,
      timeToExpire: seconds(decision.effectiveWindowMs ?? decision.resetMs),
      isBlocked: false,
      timeToBlockExpire: 0,
    },
    { decision },
  );
}

/** The record, with the store's answer under a symbol (invisible to `toEqual` and JSON). */
function withAnswer(record: ThrottlerStorageRecord, answer: StoreAnswer): ThrottlerStorageRecord {
  Object.defineProperty(record, STORE_ANSWER, { value: answer });
  return record;
}

/** The store's answer a record carries, if `ThrottlerStorageService` made it. @internal */
export function storeAnswerOf(record: ThrottlerStorageRecord): StoreAnswer | undefined {
  return (record as { [STORE_ANSWER]?: StoreAnswer })[STORE_ANSWER];
}

/** Whole seconds, rounded up, as throttler reports `Reset` and `Retry-After`. */
function seconds(ms: number): number {
  return Number.isFinite(ms) ? Math.ceil(ms / 1000) : 0;
}
