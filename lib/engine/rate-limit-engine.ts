import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { RateLimitClock } from '../clock.js';
import { describeValue } from '../errors/option-error.js';
import { RateLimitStoreError, toStoreError } from '../errors/rate-limit-store.error.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import { HotKeys } from '../observability/hot-keys/hot-keys.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import {
  publishFallbackSwitches,
  rateLimitChannels,
} from '../observability/rate-limit-channels.js';
import { WaitQueue } from '../policies/delay/wait-queue.js';
import {
  RATE_LIMIT_CLOCK,
  RATE_LIMIT_STORE,
  RESOLVED_RATE_LIMIT_OPTIONS,
} from '../rate-limit.constants.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import type {
  BlockCheck,
  ConsumeRequest,
  ConsumeResult,
  LocalFallback,
  MaybePromise,
  RateLimitCheck,
  RateLimitStore,
  SettleCheck,
} from '../store/rate-limit-store.interface.js';
import { StoreFailureLog } from '../store/store-failure-log.js';
import { isPromiseLike } from '../util/maybe-promise.js';

/**
 * The last valid clock reading: `Date`'s range, 8.64e15 ms (year 275760).
 * A reading outside [0, MAX_CLOCK_MS], or not a number (NaN), is a clock
 * failure, handled like a store failure.
 */
export const MAX_CLOCK_MS = 8.64e15;

/** What the engine reads of the module's options. @internal */
export type EngineOptions = Pick<ResolvedModuleOptions, 'failMode'> &
  Partial<Pick<ResolvedModuleOptions, 'hotKeys' | 'owner'>>;

/**
 * The store as the request path uses it: every store call goes through here,
 * so that a failure (thrown, rejected, or a clock gone wrong) is logged once
 * per burst, published, and resolved by `failMode: 'local'` or turned into a
 * {@link RateLimitStoreError} for the caller's fail mode. Answers
 * synchronously when the store does: no promise is added on that path.
 *
 * Also owns what is per process and shared by every route: the queue of
 * requests waiting for a reserved token, and the hot-keys summary.
 * The guard, the interceptor, the policies and `RateLimiter` (the public
 * service) all use this one instance.
 *
 * @internal
 */
@Injectable()
export class RateLimitEngine implements OnApplicationShutdown {
  private readonly failures = new StoreFailureLog();
  /** Requests waiting for a reserved token: `maxDelay`'s and `RateLimiter.acquire()`'s, one timer for all. */
  readonly waits: WaitQueue;
  /** The summary of the most denied callers (the module's `hotKeys` option). */
  readonly hotKeys: HotKeys | undefined;
  readonly owner: RateLimitOwner | undefined;
  private readonly unwatchFallback: (() => void) | undefined;

  constructor(
    @Inject(RATE_LIMIT_STORE) readonly store: RateLimitStore,
    @Inject(RATE_LIMIT_CLOCK) readonly clock: RateLimitClock,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) options: EngineOptions,
  ) {
    this.waits = new WaitQueue(clock);
    const hotKeys = options.hotKeys;
    if (hotKeys !== undefined)
      this.hotKeys = new HotKeys(hotKeys, clock.now(), (message) => hotKeysLogger.log(message));
    this.owner = options.owner;
    this.unwatchFallback = publishFallbackSwitches(store.localFallback, options.owner);
  }

  /**
   * Charge a request's checks. Every store failure, thrown or rejected,
   * becomes a {@link RateLimitStoreError} and is logged once per burst.
   *
   * `failMode: 'local'` is applied here, with the store's local tier: while
   * the store says its backend is down the request is decided locally at
   * once, and a request whose store call fails is decided locally instead of
   * failing. (`'open'` and `'closed'` are the caller's to apply on failure.)
   */
  consume(request: ConsumeRequest, failMode: FailMode): MaybePromise<ConsumeResult> {
    // A clock gone wrong (NaN, negative, beyond year 275760) fails like a store:
    // no store, local tier included, can decide at such a time. (Throws.)
    if (!validTime(request.now)) return this.failed(clockError(request.now), failMode);
    const local = failMode === 'local' ? this.store.localFallback : undefined;
    if (local === undefined) return this.run(() => this.store.consume(request), failMode);
    if (local.active) return this.decideLocally(local, request, false);
    return this.run(
      () => this.store.consume(request),
      failMode,
      () => this.decideLocally(local, request, true),
    );
  }

  /**
   * Give back what was charged: when a later part of a request's evaluation
   * denied it (all or nothing across the parts), when its outcome says it
   * should not have counted (`charge`), or when it stopped waiting. Nobody
   * waits for it: a failure is logged like any store failure and otherwise
   * ignored (the tokens stay spent, the safe side).
   */
  refundCharged(checks: readonly RateLimitCheck[]): void {
    this.detached(() => this.store.refund({ checks, now: this.now() }));
  }

  /**
   * Settle reservations (`settle`, `RateLimiter.reserve`): each bucket is
   * charged its delta (into debt) or given it back. Nobody waits for it: a
   * failure is logged like any store failure and otherwise ignored (the
   * estimate stays charged). A store without `settle` was refused at start-up.
   */
  settleCharged(checks: readonly SettleCheck[]): void {
    const settle = this.store.settle?.bind(this.store);
    if (settle === undefined || checks.length === 0) return;
    this.detached(() => settle({ checks, now: this.now() }));
  }

  /**
   * Apply the blocks of a denial (`blockDuration`), unless a bucket is still
   * serving a block (`unlessBlocked`: a retry near a block's end is not a new
   * abuse). Answers each bucket afterwards, or `undefined` when the store
   * failed (logged like any store failure: the key is then only denied, not
   * blocked) or cannot block. Never throws or rejects.
   */
  applyBlocks(checks: readonly BlockCheck[], now: number): MaybePromise<ConsumeResult | undefined> {
    const block = this.store.block?.bind(this.store);
    if (block === undefined) return undefined;
    let answer: MaybePromise<ConsumeResult>;
    try {
      answer = this.run(() => block({ checks, now, unlessBlocked: true }));
    } catch {
      return undefined; // logged by run()
    }
    return isPromiseLike(answer) ? answer.then(undefined, () => undefined) : answer;
  }

  async onApplicationShutdown(): Promise<void> {
    this.unwatchFallback?.();
    // Nobody is left hanging: waiting callers proceed (their tokens are theirs).
    this.waits.drain();
    this.hotKeys?.flush();
    this.failures.close();
    await this.store.close();
  }

  /**
   * Runs a store operation: a value stays a value, a promise stays a
   * promise; a failure is logged (once per burst), published, and then either
   * recovered from (`recover`) or thrown as a {@link RateLimitStoreError}.
   */
  run<T>(
    operation: () => MaybePromise<T>,
    failMode?: FailMode,
    recover?: () => T,
  ): MaybePromise<T> {
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

  /** The clock's reading; throws a store failure outside [0, {@link MAX_CLOCK_MS}] (inside {@link run}, a failure like the store's). */
  now(): number {
    const now = this.clock.now();
    if (!validTime(now)) throw clockError(now);
    return now;
  }

  /** {@link run} for an operation nobody waits for: its failure is logged by `run`, never left unhandled. */
  private detached(operation: () => MaybePromise<unknown>): void {
    let answer: MaybePromise<unknown>;
    try {
      answer = this.run(operation);
    } catch {
      return; // logged by run()
    }
    if (isPromiseLike(answer)) answer.then(undefined, () => undefined);
  }

  /** The store's local tier decides; a failure there too is a store failure. */
  private decideLocally(
    local: LocalFallback,
    request: ConsumeRequest,
    afterFailure: boolean,
  ): ConsumeResult {
    if (rateLimitChannels.localFallback.hasSubscribers)
      rateLimitChannels.localFallback.publish({ afterFailure, owner: this.owner });
    try {
      return local.consumeLocally(request);
    } catch (error) {
      return this.failed(error, 'local');
    }
  }

  private failed<T>(error: unknown, failMode: FailMode | undefined, recover?: () => T): T {
    const consecutiveFailures = this.failures.failed(error);
    if (rateLimitChannels.storeFailure.hasSubscribers)
      rateLimitChannels.storeFailure.publish({
        error,
        failMode,
        owner: this.owner,
        consecutiveFailures,
      });
    if (recover) return recover();
    throw toStoreError(error, 'Rate-limit store failed');
  }

  /** A store call answered: after failures, that is a recovery (logged, published). */
  private succeeded(): void {
    const failures = this.failures.succeeded();
    if (failures > 0 && rateLimitChannels.storeRecovery.hasSubscribers)
      rateLimitChannels.storeRecovery.publish({ failures, owner: this.owner });
  }
}

const hotKeysLogger = new Logger('RateLimit');

function validTime(now: number): boolean {
  return now >= 0 && now <= MAX_CLOCK_MS;
}

/** The failure a clock reading outside [0, {@link MAX_CLOCK_MS}] is (only made when one is). */
function clockError(now: unknown): RateLimitStoreError {
  return new RateLimitStoreError(
    `Rate-limit clock read ${describeValue(now)}, not a time in [0, ${MAX_CLOCK_MS}] ms`,
  );
}

/** A store call's duration, for the metrics exporters. */
function publishStoreCall(start: number, failed: boolean, owner: RateLimitOwner | undefined): void {
  rateLimitChannels.storeCall.publish({
    durationSeconds: (performance.now() - start) / 1000,
    failed,
    owner,
  });
}
