import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { RateLimitDecision } from './algorithms/rate-limit-decision.js';
import type { RateLimitClock } from './clock.js';
import { describeValue, optionError } from './errors/option-error.js';
import { optionNames, rejectUnknownOptions } from './errors/unknown-options.js';
import { RateLimitStoreError, toStoreError } from './errors/rate-limit-store.error.js';
import type { FailMode, Rate, RateLimitOptions } from './interfaces/rate-limit-options.interface.js';
import { customIdentity } from './keys/key-strategy.js';
import { resolveBucket } from './limits/resolve-bucket.js';
import { RATE_LIMIT_CLOCK, RATE_LIMIT_STORE, DEFAULT_LIMIT_NAME, RESOLVED_RATE_LIMIT_OPTIONS } from './rate-limit.constants.js';
import { bucketNamespace } from './store/bucket-key.js';
import type { BlockCheck, BucketRef, RateLimitCheck, ConsumeRequest, ConsumeResult, LocalFallback, MaybePromise, RateLimitStore, TokenBucketLimit } from './store/rate-limit-store.interface.js';
import { StoreFailureLog } from './store/store-failure-log.js';
import { publishFallbackSwitches, rateLimitChannels } from './observability/rate-limit-channels.js';
import type { RateLimitOwner } from './interfaces/rate-limit-owner.interface.js';
import { isPromiseLike } from './util/maybe-promise.js';
import { retryAfterSeconds } from './headers/rate-limit-headers.js';
import { RateLimitExceededException } from './errors/rate-limit-exceeded.exception.js';
import { ProgrammaticLimits, type ProgrammaticLimit } from './limits/programmatic-limit.js';

export type { ProgrammaticLimit } from './limits/programmatic-limit.js';
import { realDecision, reservingBucket, waitMs } from './policies/delay/reservation.js';
import { MAX_WAITING, WaitQueue } from './policies/delay/wait-queue.js';
import { acquireOptions, type AcquireOptions } from './policies/delay/acquire-options.js';
import { HotKeys, type HotKey, type HottestKeysQuery } from './observability/hot-keys/hot-keys.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';

/**
 * The last valid clock reading: `Date`'s range, 8.64e15 ms (year 275760).
 * A reading outside [0, MAX_CLOCK_MS], or not a number (NaN), is a clock
 * failure, handled like a store failure.
 */
export const MAX_CLOCK_MS = 8.64e15;

/** The failure a clock reading outside [0, {@link MAX_CLOCK_MS}] is (only made when one is). */
function clockError(now: unknown): RateLimitStoreError {
  return new RateLimitStoreError(`Rate-limit clock read ${describeValue(now)}, not a time in [0, ${MAX_CLOCK_MS}] ms`);
}

/**
 * The rate limiter as a service: the guard's engine, and the programmatic API
 * for application code (jobs, outgoing calls, login attempts).
 *
 * Programmatic buckets are keyed like a `scope: 'shared'` limit whose key
 * function returns `key`: `limiter.reset(email, { name: 'login', rate })`
 * resets the bucket of `@RateLimit({ name: 'login', scope: 'shared', key: ctx => email })`.
 *
 * @publicApi
 */
@Injectable()
export class RateLimiter implements OnApplicationShutdown {
  private readonly failures = new StoreFailureLog();
  private readonly limits = new ProgrammaticLimits();

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS)
    private readonly options: Pick<ResolvedModuleOptions, 'failMode' | 'ipv6Subnet' | 'errorFormat'> & Partial<Pick<ResolvedModuleOptions, 'hotKeys' | 'owner'>>,
  ) {
    this.waits = new WaitQueue(clock);
    const hotKeys = options.hotKeys;
    if (hotKeys !== undefined) this.hotKeys = new HotKeys(hotKeys, clock.now(), (message) => hotKeysLogger.log(message));
    this.owner = options.owner;
    this.unwatchFallback = publishFallbackSwitches(store.localFallback, options.owner);
  }

  /**
   * The summary of the most denied callers (the module's `hotKeys` option),
   * fed by the guard and {@link consume}.
   *
   * @internal
   */
  readonly hotKeys: HotKeys | undefined;

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
    if (this.hotKeys === undefined) throw new TypeError('RateLimiter.hottestKeys: enable the hotKeys option of RateLimitModule.forRoot() to keep the summary');
    const top = query.top ?? 10;
    if (!Number.isInteger(top) || top < 1) throw new TypeError(`RateLimiter.hottestKeys: top must be a positive integer, got ${describeValue(top)}`);
    return this.hotKeys.hottest({ limit: query.limit, top }, this.clock.now());
  }

  private readonly owner: RateLimitOwner | undefined;
  private readonly unwatchFallback: (() => void) | undefined;

  /**
   * Take `cost` tokens (default 1) from `key`'s bucket of `limit`.
   * Rejects with {@link RateLimitStoreError} when the store fails (with the
   * module's `failMode: 'local'`, a store with a local tier decides locally instead).
   */
  async consume(key: string, limit: ProgrammaticLimit, options: { cost?: number } = {}): Promise<RateLimitDecision> {
    const cost = options.cost ?? 1;
    if (!Number.isFinite(cost) || cost <= 0) throw new TypeError(`RateLimiter.consume: cost must be a positive number, got ${describeValue(cost)}`);
    const checks = [{ ...this.bucket(key, limit), cost }];
    const now = this.clock.now();
    const result = await this.evaluate({ checks, now }, this.options.failMode);
    if (!result.allowed) this.hotKeys?.denied(limit.name ?? DEFAULT_LIMIT_NAME, checks[0]!.identity!, now);
    return result.decisions[0]!;
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
  async enforce(key: string, limit: ProgrammaticLimit, options: { cost?: number } = {}): Promise<RateLimitDecision> {
    const decision = await this.consume(key, limit, options);
    if (decision.allowed) return decision;
    const retryAfter = retryAfterSeconds([decision]);
    const { limit: bucket, name } = this.limits.resolve(limit);
    throw new RateLimitExceededException(
      retryAfter,
      [decision],
      retryAfter === undefined ? 'Request cost exceeds the rate limit burst' : 'Too Many Requests',
      { limits: [{ name, rate: bucket.rate, burst: bucket.burst }], errorFormat: this.options.errorFormat },
    );
  }

  /**
   * Give `cost` tokens (default 1) back to `key`'s bucket of `limit`, never
   * making it fuller than it would have been had they not been taken (a
   * bucket that has refilled meanwhile stays full). For what a limit with
   * `charge: 'failures'` does by itself, in your own code.
   */
  async refund(key: string, limit: ProgrammaticLimit, options: { cost?: number } = {}): Promise<RateLimitDecision> {
    const cost = options.cost ?? 1;
    if (!Number.isFinite(cost) || cost <= 0) throw new TypeError(`RateLimiter.refund: cost must be a positive number, got ${describeValue(cost)}`);
    const checks = [{ ...this.bucket(key, limit), cost }];
    const result = await this.call(() => this.store.refund({ checks, now: this.now() }));
    return result.decisions[0]!;
  }

  /**
   * Block `key`'s bucket of `limit` for `durationMs` (a penalty): every
   * request denied until then, with a `Retry-After` that says so; a bucket
   * blocked longer stays so. Rejects when the store cannot block.
   */
  async block(key: string, limit: ProgrammaticLimit, durationMs: number): Promise<RateLimitDecision> {
    if (!Number.isFinite(durationMs) || durationMs <= 0) throw new TypeError(`RateLimiter.block: durationMs must be a positive number, got ${describeValue(durationMs)}`);
    const block = this.store.block?.bind(this.store);
    if (block === undefined) throw new TypeError('RateLimiter.block: the store cannot block a bucket (it has no block())');
    const bucket = this.bucket(key, limit);
    const result = await this.call(() => block({ checks: [{ ...bucket, durationMs }], now: this.now() }));
    return result.decisions[0]!;
  }

  /**
   * Apply the blocks of a denial (`blockDuration`). Nobody waits for it: a
   * failure is logged like any store failure (the key is then only denied, not blocked).
   *
   * @internal used by the guard
   */
  applyBlocks(checks: readonly BlockCheck[], now: number): void {
    const block = this.store.block?.bind(this.store);
    if (block === undefined) return;
    let answer: MaybePromise<unknown>;
    try {
      answer = this.call(() => block({ checks, now }));
    } catch {
      return; // logged by call()
    }
    if (isPromiseLike(answer)) answer.then(undefined, () => undefined);
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
  async acquire(key: string, limit: ProgrammaticLimit, options: AcquireOptions = {}): Promise<RateLimitDecision> {
    const { cost, maxWaitMs } = acquireOptions(options);
    options.signal?.throwIfAborted();
    const ref = this.bucket(key, limit);
    const bucket = ref.limit;
    const { name } = this.limits.resolve(limit);
    const reserving = reservingBucket(bucket, maxWaitMs);
    const checks = [{ ...ref, limit: reserving, cost }];
    const result = await this.evaluate({ checks, now: this.clock.now() }, this.options.failMode);
    const decision = realDecision(result.decisions[0]!, reserving, maxWaitMs);
    if (!result.allowed) {
      const retryAfter = retryAfterSeconds([decision]);
      throw new RateLimitExceededException(retryAfter, [decision], `No token within maxWaitMs (${maxWaitMs} ms)`, {
        limits: [{ name, rate: bucket.rate, burst: bucket.burst }],
        errorFormat: this.options.errorFormat,
      });
    }
    const wait = waitMs(result.decisions[0]!, reserving, maxWaitMs);
    if (wait > 0) await this.waitReserved(wait, checks, options.signal);
    return decision;
  }

  /**
   * The queue of requests waiting for a reserved token: `acquire()`'s and
   * the guard's (`maxDelay`), one timer for all.
   *
   * @internal
   */
  readonly waits: WaitQueue;

  private waitReserved(delayMs: number, checks: readonly RateLimitCheck[], signal: AbortSignal | undefined): Promise<void> {
    const queued = this.waits.wait(delayMs);
    if (queued === undefined) {
      this.refundUncharged(checks);
      return Promise.reject(new RateLimitStoreError(`RateLimiter.acquire: ${MAX_WAITING} callers are waiting already, the most one process holds`));
    }
    if (signal === undefined) return queued.done;
    return new Promise<void>((resolve, reject) => {
      // Rejected once the tokens are back (or the store failed to take them, logged): a caller
      // retrying at once then finds them.
      const onAbort = () => {
        queued.cancel();
        void Promise.resolve()
          .then(() => this.call(() => this.store.refund({ checks, now: this.now() })))
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
    const result = await this.call(() => this.store.peek({ checks, now: this.now() }));
    return result.decisions[0]!;
  }

  /** Refill `key`'s bucket of `limit` (e.g. after a successful login). */
  async reset(key: string, limit: ProgrammaticLimit): Promise<void> {
    const checks = [this.bucket(key, limit)];
    await this.call(() => this.store.reset({ checks, now: this.now() }));
  }

  /**
   * Charge a request's checks. Answers synchronously when the store does
   * (no promise added on that path); every store failure, thrown or
   * rejected, becomes a {@link RateLimitStoreError} and is logged once per burst.
   *
   * `failMode: 'local'` is applied here, with the store's local tier: while
   * the store says its backend is down the request is decided locally at
   * once, and a request whose store call fails is decided locally instead of
   * failing. (`'open'` and `'closed'` are the caller's to apply on failure.)
   *
   * @internal used by the guard
   */
  evaluate(request: ConsumeRequest, failMode: FailMode): MaybePromise<ConsumeResult> {
    // A clock gone wrong (NaN, negative, beyond year 275760) fails like a store:
    // no store, local tier included, can decide at such a time. (Throws.)
    if (!(request.now >= 0 && request.now <= MAX_CLOCK_MS)) return this.failed(clockError(request.now), failMode);
    const local = failMode === 'local' ? this.store.localFallback : undefined;
    if (local === undefined) return this.call(() => this.store.consume(request), failMode);
    if (local.active) return this.decideLocally(local, request, false);
    return this.call(
      () => this.store.consume(request),
      failMode,
      () => this.decideLocally(local, request, true),
    );
  }

  /**
   * Give back what a request was charged when a later part of its evaluation
   * denied it (all or nothing across the parts), or when its outcome says it
   * should not have counted (`charge`). Nobody waits for it: a failure is
   * logged like any store failure and otherwise ignored (the tokens stay
   * spent, the safe side).
   *
   * @internal used by the guard
   */
  refundUncharged(checks: readonly RateLimitCheck[]): void {
    let answer: MaybePromise<unknown>;
    try {
      answer = this.call(() => this.store.refund({ checks, now: this.now() }));
    } catch {
      return; // logged by call()
    }
    if (isPromiseLike(answer)) answer.then(undefined, () => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    this.unwatchFallback?.();
    // Nobody is left hanging: waiting callers proceed (their tokens are theirs).
    this.waits.drain();
    this.hotKeys?.flush();
    await this.store.close();
  }

  /**
   * Runs a store operation: a value stays a value, a promise stays a
   * promise; a failure is logged (once per burst), published, and then either
   * recovered from (`recover`) or thrown as a {@link RateLimitStoreError}.
   */
  private call<T>(operation: () => MaybePromise<T>, failMode?: FailMode, recover?: () => T): MaybePromise<T> {
    let answer: MaybePromise<T>;
    try {
      answer = operation();
    } catch (error) {
      return this.failed(error, failMode, recover);
    }
    if (!isPromiseLike(answer)) {
      this.succeeded();
      return answer;
    }
    // Only calls that wait for an answer (a round trip) are timed, from the
    // moment the request is handed off, and only while a metrics exporter
    // listens (-1: nobody does). A synchronous answer costs less than reading
    // the clock twice would.
    const start = rateLimitChannels.storeCall.hasSubscribers ? performance.now() : -1;
    return answer.then(
      (value) => {
        if (start >= 0) publishStoreCall(start, false, this.owner);
        this.succeeded();
        return value;
      },
      (error: unknown) => {
        if (start >= 0) publishStoreCall(start, true, this.owner);
        return this.failed(error, failMode, recover);
      },
    );
  }

  /** The store's local tier decides; a failure there too is a store failure. */
  private decideLocally(local: LocalFallback, request: ConsumeRequest, afterFailure: boolean): ConsumeResult {
    if (rateLimitChannels.localFallback.hasSubscribers) rateLimitChannels.localFallback.publish({ afterFailure, owner: this.owner });
    try {
      return local.consumeLocally(request);
    } catch (error) {
      return this.failed(error, 'local');
    }
  }

  private failed<T>(error: unknown, failMode: FailMode | undefined, recover?: () => T): T {
    const consecutiveFailures = this.failures.failed(error);
    if (rateLimitChannels.storeFailure.hasSubscribers) rateLimitChannels.storeFailure.publish({ error, failMode, owner: this.owner, consecutiveFailures });
    if (recover) return recover();
    throw toStoreError(error, 'Rate-limit store failed');
  }

  /** A store call answered: after failures, that is a recovery (logged, published). */
  private succeeded(): void {
    const failures = this.failures.succeeded();
    if (failures > 0 && rateLimitChannels.storeRecovery.hasSubscribers) rateLimitChannels.storeRecovery.publish({ failures, owner: this.owner });
  }

  /** The clock's reading; a failure (thrown, inside {@link call}) outside [0, {@link MAX_CLOCK_MS}]. */
  private now(): number {
    const now = this.clock.now();
    if (!(now >= 0 && now <= MAX_CLOCK_MS)) throw clockError(now);
    return now;
  }

  private bucket(key: string, limit: ProgrammaticLimit): BucketRef & { readonly limit: TokenBucketLimit } {
    const resolved = this.limits.resolve(limit);
    const identity = customIdentity(key, this.options.ipv6Subnet);
    return { key: resolved.namespace + identity, namespace: resolved.namespace, identity, limit: resolved.limit };
  }
}

const hotKeysLogger = new Logger('RateLimit');

/** A store call's duration, for the metrics exporters. */
function publishStoreCall(start: number, failed: boolean, owner: RateLimitOwner | undefined): void {
  rateLimitChannels.storeCall.publish({ durationSeconds: (performance.now() - start) / 1000, failed, owner });
}
