import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { RateLimitDecision } from './algorithms/gcra.js';
import type { RateLimitClock } from './clock.js';
import { RateLimitStoreError } from './errors/rate-limit-store.error.js';
import type { RateLimitOptions } from './interfaces/rate-limit-options.interface.js';
import { boundedIdentity } from './keys/bounded-key.js';
import { resolveBucket } from './limits/resolve-bucket.js';
import { RATE_LIMIT_CLOCK, RATE_LIMIT_STORE, DEFAULT_LIMIT_NAME } from './rate-limit.constants.js';
import type { ConsumeRequest, ConsumeResult, RateLimitCheck, RateLimitStore } from './store/rate-limit-store.interface.js';
import { StoreFailureLog } from './store/store-failure-log.js';
import { RESOLVED_RATE_LIMIT_OPTIONS } from './rate-limit.providers.js';
import type { ResolvedModuleOptions } from './resolve-module-options.js';

/** A limit as the programmatic API takes it: the bucket part of {@link RateLimitOptions}. */
export type ProgrammaticLimit = Pick<RateLimitOptions, 'name' | 'rate' | 'burst'>;

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
  private readonly limits = new WeakMap<ProgrammaticLimit, { readonly rate: number; readonly burst: number; readonly namespace: string }>();

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(RATE_LIMIT_CLOCK) private readonly clock: RateLimitClock,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: Pick<ResolvedModuleOptions, 'failMode'>,
  ) {}

  /**
   * Take `cost` tokens (default 1) from `key`'s bucket of `limit`.
   * Rejects with {@link RateLimitStoreError} when the store fails (with the
   * module's `failMode: 'local'`, a store with a local tier decides locally instead).
   */
  async consume(key: string, limit: ProgrammaticLimit, options: { cost?: number } = {}): Promise<RateLimitDecision> {
    const cost = options.cost ?? 1;
    if (!Number.isFinite(cost) || cost <= 0) throw new TypeError(`RateLimiter.consume: cost must be a positive number, got ${cost}`);
    const checks = [{ ...this.bucket(key, limit), cost }];
    const result = await this.evaluate({ checks, now: this.clock.now(), failMode: this.options.failMode });
    return result.decisions[0]!;
  }

  /** `key`'s bucket of `limit` as it is now, without charging it. */
  async peek(key: string, limit: ProgrammaticLimit): Promise<RateLimitDecision> {
    const checks = [this.bucket(key, limit)];
    const result = await this.call(() => this.store.peek({ checks, now: this.clock.now() }));
    return result.decisions[0]!;
  }

  /** Refill `key`'s bucket of `limit` (e.g. after a successful login). */
  async reset(key: string, limit: ProgrammaticLimit): Promise<void> {
    const checks = [this.bucket(key, limit)];
    await this.call(() => this.store.reset({ checks, now: this.clock.now() }));
  }

  /**
   * Charge a request's checks. Answers synchronously when the store does
   * (no promise added on that path); every store failure, thrown or
   * rejected, becomes a {@link RateLimitStoreError} and is logged once per burst.
   *
   * @internal used by the guard
   */
  evaluate(request: ConsumeRequest): ConsumeResult | Promise<ConsumeResult> {
    return this.call(() => this.store.consume(request));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }

  private call<T>(operation: () => T | Promise<T>): T | Promise<T> {
    let answer: T | Promise<T>;
    try {
      answer = operation();
    } catch (error) {
      throw this.failed(error);
    }
    if (!isPromiseLike(answer)) {
      this.failures.succeeded();
      return answer;
    }
    return answer.then(
      (value) => {
        this.failures.succeeded();
        return value;
      },
      (error: unknown) => {
        throw this.failed(error);
      },
    );
  }

  private failed(error: unknown): RateLimitStoreError {
    this.failures.failed(error);
    return error instanceof RateLimitStoreError ? error : new RateLimitStoreError('Rate-limit store failed', { cause: error });
  }

  private bucket(key: string, limit: ProgrammaticLimit): Omit<RateLimitCheck, 'cost'> {
    let resolved = this.limits.get(limit);
    if (!resolved) {
      const { rate, burst } = resolveBucket(limit, (option, problem) => {
        throw new TypeError(`RateLimiter: limit "${limit.name ?? DEFAULT_LIMIT_NAME}": ${option} ${problem}`);
      });
      resolved = { rate, burst, namespace: `${limit.name ?? DEFAULT_LIMIT_NAME}|*|k` };
      this.limits.set(limit, resolved);
    }
    return { key: resolved.namespace + boundedIdentity(String(key)), rate: resolved.rate, burst: resolved.burst };
  }
}

export function isPromiseLike<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
