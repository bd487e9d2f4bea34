import {
  AdaptiveConcurrencyLimits,
  type ConcurrencyLimitState,
} from './concurrency/adaptive/adaptive-concurrency-limits.js';
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import type { RateLimitDecision } from './algorithms/rate-limit-decision.js';
import type { RateLimitClock } from './clock.js';
import { RateLimitEngine, type EngineOptions } from './engine/rate-limit-engine.js';
import { describeValue } from './errors/option-error.js';
import { RateLimitStoreError } from './errors/rate-limit-store.error.js';
import { customIdentity } from './keys/key-strategy.js';
import {
  RATE_LIMIT_CLOCK,
  RATE_LIMIT_STORE,
  DEFAULT_LIMIT_NAME,
  RESOLVED_RATE_LIMIT_OPTIONS,
} from './rate-limit.constants.js';
import type {
  BucketRef,
  RateLimitCheck,
  RateLimitStore,
  TokenBucketLimit,
} from './store/rate-limit-store.interface.js';
import { retryAfterSeconds } from './headers/rate-limit-headers.js';
import { RateLimitExceededException } from './errors/rate-limit-exceeded.exception.js';
import { ProgrammaticLimits, type ProgrammaticLimit } from './limits/programmatic-limit.js';
import { realDecision, reservingBucket, waitMs } from './policies/delay/reservation.js';
import { MAX_WAITING, MAX_WAITING_PER_KEY } from './policies/delay/wait-queue.js';
import { acquireOptions, type AcquireOptions } from './policies/delay/acquire-options.js';
import type { HotKey, HottestKeysQuery } from './observability/hot-keys/hot-keys.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';
import {
  createReservation,
  type RateLimitReservation,
} from './reservations/rate-limit-reservation.js';

export type { ProgrammaticLimit } from './limits/programmatic-limit.js';
export type { RateLimitReservation } from './reservations/rate-limit-reservation.js';
export { MAX_CLOCK_MS } from './engine/rate-limit-engine.js';

/**
 * The rate limiter as a service: the programmatic API for application code
 * (jobs, outgoing calls, login attempts), on the same store, clock and
 * failure handling as the guard (one internal engine for both).
 *
 * Programmatic buckets are keyed like a `scope: 'shared'` limit whose key
 * function returns `key`: `limiter.reset(email, { name: 'login', rate })`
 * resets the bucket of `@RateLimit({ name: 'login', scope: 'shared', key: ctx => email })`.
 *
 * @publicApi
 */
@Injectable()
export class RateLimiter implements OnApplicationShutdown {
  private readonly limits = new ProgrammaticLimits();
  private readonly engine: RateLimitEngine;
  /** Built by hand (`new RateLimiter(store, clock, options)`): this service closes what it made. */
  private readonly ownsEngine: boolean;

  constructor(
    @Inject(RATE_LIMIT_STORE) store: RateLimitStore,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS)
    private readonly options: EngineOptions &
      Pick<ResolvedModuleOptions, 'ipv6Subnet' | 'errorFormat'>,
    @Optional() engine?: RateLimitEngine,
    @Optional() private readonly adaptiveConcurrency?: AdaptiveConcurrencyLimits,
  ) {
    this.ownsEngine = engine === undefined;
    this.engine = engine ?? new RateLimitEngine(store, clock, options);
  }

  /**
   * The callers each limit denied most, recently (the current and the
   * previous `hotKeys.windowMs`): for an admin endpoint. Needs the module's
   * `hotKeys` option (throws without it, rather than answering "nobody").
   * Identities are as each limit's key made them: addresses, user ids,
   * header values (personal data, maybe: guard the endpoint).
   *
   * ```ts
   * @Get('admin/hot-keys') hot() { return this.limiter.hottestKeys({ limit: 'search', top: 20 }); }
   * ```
   */
  hottestKeys(query: HottestKeysQuery = {}): HotKey[] {
    const hotKeys = this.engine.hotKeys;
    if (hotKeys === undefined)
      throw new TypeError(
        'RateLimiter.hottestKeys: enable the hotKeys option of RateLimitModule.forRoot() to keep the summary',
      );
    const top = query.top ?? 10;
    if (!Number.isInteger(top) || top < 1)
      throw new TypeError(
        `RateLimiter.hottestKeys: top must be a positive integer, got ${describeValue(top)}`,
      );
    return hotKeys.hottest({ limit: query.limit, top }, this.clock.now());
  }

  /**
   * An adaptive `concurrency` limit now, per key: the calls it allows in
   * flight, those in flight and those waiting in its backlog. `key` (the
   * caller's identity as the limit's `key` makes it: `'global'` for
   * `key: 'global'`, `'k=<answer>'` for a key function) narrows it to one
   * key; without it, every key the process keeps. Empty
   * for a limit no call has used yet (or not adaptive, or not in this module).
   *
   * ```ts
   * @Get('admin/inference') inference() { return this.limiter.concurrencyLimit('inference'); }
   * ```
   */
  concurrencyLimit(name: string, key?: string): ConcurrencyLimitState[] {
    return this.adaptiveConcurrency?.current(name, key) ?? [];
  }

  /**
   * Take `cost` tokens (default 1) from `key`'s bucket of `limit`.
   * Rejects with {@link RateLimitStoreError} when the store fails (with the
   * module's `failMode: 'local'`, a store with a local tier decides locally instead).
   */
  async consume(
    key: string,
    limit: ProgrammaticLimit,
    options: { cost?: number } = {},
  ): Promise<RateLimitDecision> {
    const cost = options.cost ?? 1;
    if (!Number.isFinite(cost) || cost <= 0)
      throw new TypeError(
        `RateLimiter.consume: cost must be a positive number, got ${describeValue(cost)}`,
      );
    const checks = [{ ...this.bucket(key, limit), cost }];
    const now = this.clock.now();
    const result = await this.engine.consume({ checks, now }, this.options.failMode);
    if (!result.allowed)
      this.engine.hotKeys?.denied(limit.name ?? DEFAULT_LIMIT_NAME, checks[0]!.identity!, now);
    return result.decisions[0]!;
  }

  /**
   * Reserve an estimate of `cost` tokens (default 1) of `key`'s bucket of
   * `limit`, for work whose real cost is known only afterwards (LLM tokens,
   * rows exported, an outgoing call billed by size): admitted or denied like
   * {@link consume}, then {@link RateLimitReservation.settle} with the real
   * cost (or `cancel()`). A bucket in debt from an earlier overspend denies
   * until it is repaid, `retryAfterMs` saying when. Throws a `TypeError` with
   * a store that cannot settle.
   */
  async reserve(
    key: string,
    limit: ProgrammaticLimit,
    options: { cost?: number } = {},
  ): Promise<RateLimitReservation> {
    const cost = options.cost ?? 1;
    if (!Number.isFinite(cost) || cost <= 0)
      throw new TypeError(
        `RateLimiter.reserve: cost must be a positive number, got ${describeValue(cost)}`,
      );
    if (typeof this.engine.store.settle !== 'function')
      throw new TypeError(
        'RateLimiter.reserve: the store cannot settle a reservation (it has no settle())',
      );
    const check = { ...this.bucket(key, limit), cost };
    const decision = await this.consume(key, limit, { cost });
    return createReservation(this.engine, check, decision);
  }

  /**
   * {@link consume}, and on denial throw a {@link RateLimitExceededException}
   * whose response is the guard's own 429 for this limit: status, body (in
   * the module's `errorFormat`), `Retry-After` and the rate-limit headers
   * (written by the module's exception filter, in the module's `headers` mode).
   *
   * ```ts
   * await this.limiter.enforce(`export:${user.id}`, { name: 'exports', rate: '10/hour', burst: 3 });
   * ```
   */
  async enforce(
    key: string,
    limit: ProgrammaticLimit,
    options: { cost?: number } = {},
  ): Promise<RateLimitDecision> {
    const decision = await this.consume(key, limit, options);
    if (decision.allowed) return decision;
    const retryAfter = retryAfterSeconds([decision]);
    const { limit: bucket, name } = this.limits.resolve(limit);
    throw new RateLimitExceededException(
      retryAfter,
      [decision],
      retryAfter === undefined ? 'Request cost exceeds the rate limit burst' : 'Too Many Requests',
      {
        limits: [{ name, rate: bucket.rate, burst: bucket.burst }],
        errorFormat: this.options.errorFormat,
      },
    );
  }

  /**
   * Give `cost` tokens (default 1) back to `key`'s bucket of `limit`, never
   * making it fuller than it would have been had they not been taken (a
   * bucket that has refilled meanwhile stays full). For what a limit with
   * `charge: 'failures'` does by itself, in your own code.
   */
  async refund(
    key: string,
    limit: ProgrammaticLimit,
    options: { cost?: number } = {},
  ): Promise<RateLimitDecision> {
    const cost = options.cost ?? 1;
    if (!Number.isFinite(cost) || cost <= 0)
      throw new TypeError(
        `RateLimiter.refund: cost must be a positive number, got ${describeValue(cost)}`,
      );
    const checks = [{ ...this.bucket(key, limit), cost }];
    const result = await this.engine.run(() =>
      this.engine.store.refund({ checks, now: this.engine.now() }),
    );
    return result.decisions[0]!;
  }

  /**
   * Block `key`'s bucket of `limit` for `durationMs` (a penalty): every
   * request denied until then, with a `Retry-After` that says so; a bucket
   * blocked longer stays so. Rejects when the store cannot block.
   */
  async block(
    key: string,
    limit: ProgrammaticLimit,
    durationMs: number,
  ): Promise<RateLimitDecision> {
    if (!Number.isFinite(durationMs) || durationMs <= 0)
      throw new TypeError(
        `RateLimiter.block: durationMs must be a positive number, got ${describeValue(durationMs)}`,
      );
    const store = this.engine.store;
    const block = store.block?.bind(store);
    if (block === undefined)
      throw new TypeError('RateLimiter.block: the store cannot block a bucket (it has no block())');
    const bucket = this.bucket(key, limit);
    const result = await this.engine.run(() =>
      block({ checks: [{ ...bucket, durationMs }], now: this.engine.now() }),
    );
    return result.decisions[0]!;
  }

  /**
   * Wait for `cost` tokens (default 1) of `key`'s bucket of `limit`: resolves
   * when the caller may proceed, with the decision. The tokens are reserved
   * at once, in the store (shared with every process using it), so callers
   * are served in order and never over the rate, with no polling. Rejects
   * with a {@link RateLimitExceededException} at once when the tokens cannot
   * be had within `maxWaitMs` (default 60 s, at most one hour), and with
   * `signal`'s reason when it aborts; either way nothing stays reserved.
   *
   * ```ts
   * await this.limiter.acquire('partner-api', { rate: '10/s', burst: 10 }, { maxWaitMs: 5_000 });
   * return fetch(url);
   * ```
   */
  async acquire(
    key: string,
    limit: ProgrammaticLimit,
    options: AcquireOptions = {},
  ): Promise<RateLimitDecision> {
    const { cost, maxWaitMs } = acquireOptions(options);
    options.signal?.throwIfAborted();
    const ref = this.bucket(key, limit);
    const bucket = ref.limit;
    const { name } = this.limits.resolve(limit);
    const reserving = reservingBucket(bucket, maxWaitMs);
    const checks = [{ ...ref, limit: reserving, cost }];
    const result = await this.engine.consume(
      { checks, now: this.clock.now() },
      this.options.failMode,
    );
    const decision = realDecision(result.decisions[0]!, reserving, maxWaitMs);
    if (!result.allowed) {
      const retryAfter = retryAfterSeconds([decision]);
      throw new RateLimitExceededException(
        retryAfter,
        [decision],
        `No token within maxWaitMs (${maxWaitMs} ms)`,
        {
          limits: [{ name, rate: bucket.rate, burst: bucket.burst }],
          errorFormat: this.options.errorFormat,
        },
      );
    }
    const wait = waitMs(result.decisions[0]!, reserving, maxWaitMs);
    if (wait > 0) await this.waitReserved(wait, checks, options.signal);
    return decision;
  }

  private waitReserved(
    delayMs: number,
    checks: readonly RateLimitCheck[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const key = checks[0]!.key;
    const queued = this.engine.waits.wait(delayMs, key);
    if (queued === undefined) {
      const why =
        this.engine.waits.fullFor(key) === 'key'
          ? `${MAX_WAITING_PER_KEY} callers of this key are waiting already, the most one key may hold in a process`
          : `${MAX_WAITING} callers are waiting already, the most one process holds`;
      this.engine.refundCharged(checks);
      return Promise.reject(new RateLimitStoreError(`RateLimiter.acquire: ${why}`));
    }
    if (signal === undefined) return queued.done;
    return new Promise<void>((resolve, reject) => {
      // Rejected once the tokens are back (or the store failed to take them, logged): a caller
      // retrying at once then finds them.
      const onAbort = () => {
        queued.cancel();
        void Promise.resolve()
          .then(() =>
            this.engine.run(() => this.engine.store.refund({ checks, now: this.engine.now() })),
          )
          .then(
            () => reject(signal.reason),
            () => reject(signal.reason),
          );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void queued.done.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** `key`'s bucket of `limit` as it is now, without charging it. */
  async peek(key: string, limit: ProgrammaticLimit): Promise<RateLimitDecision> {
    const checks = [this.bucket(key, limit)];
    const result = await this.engine.run(() =>
      this.engine.store.peek({ checks, now: this.engine.now() }),
    );
    return result.decisions[0]!;
  }

  /** Refill `key`'s bucket of `limit` (e.g. after a successful login). */
  async reset(key: string, limit: ProgrammaticLimit): Promise<void> {
    const checks = [this.bucket(key, limit)];
    await this.engine.run(() => this.engine.store.reset({ checks, now: this.engine.now() }));
  }

  /** Built by hand, this service owns its engine: waiting callers proceed, and the store is closed. */
  async onApplicationShutdown(): Promise<void> {
    if (this.ownsEngine) await this.engine.onApplicationShutdown();
  }

  private bucket(
    key: string,
    limit: ProgrammaticLimit,
  ): BucketRef & { readonly limit: TokenBucketLimit } {
    const resolved = this.limits.resolve(limit);
    const identity = customIdentity(key, this.options.ipv6Subnet);
    return {
      key: resolved.namespace + identity,
      namespace: resolved.namespace,
      identity,
      limit: resolved.limit,
    };
  }
}
