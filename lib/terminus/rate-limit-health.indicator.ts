import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { storeKind } from '../observability/metrics/store-kind.js';
import { RATE_LIMIT_STORE, RESOLVED_RATE_LIMIT_OPTIONS } from '../rate-limit.constants.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import type { RateLimitStore, StoreHealth } from '../store/rate-limit-store.interface.js';

/** What {@link RateLimitHealthIndicator.isHealthy} takes besides the key. */
export interface RateLimitHealthOptions {
  /** The longest to wait for the store's backend (a PING), milliseconds. @default 1000 */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 1_000;

/** The part of terminus' session used; `degraded` is terminus 12's (11 has none). */
interface Session<Key extends string> {
  up(data: Record<string, unknown>): HealthIndicatorResult<Key>;
  down(data: Record<string, unknown>): HealthIndicatorResult<Key>;
  degraded?(data: Record<string, unknown>): HealthIndicatorResult<Key>;
}

/**
 * A `@nestjs/terminus` health indicator for the rate limiter's store.
 *
 * ```ts
 * @Get('health')
 * @HealthCheck()
 * check() {
 *   return this.health.check([() => this.rateLimit.isHealthy()]);
 * }
 * ```
 *
 * It asks the store ({@link RateLimitStore.health}) and knows nothing of
 * adapters: Redis answers a PING (`up`, with `latencyMs`) or not (`down`:
 * the check answers 503); a two-tier store deciding from its local fallback
 * is `degraded` (terminus 12: the check stays 200 with status `degraded`;
 * terminus 11, which has no such state: `up` with `degraded: true`), since
 * its limits still hold and failing every instance's probe at once, when
 * Redis dies, is what the fallback is there to avoid (so is a store with a
 * local fallback whose backend is down, in a module whose `failMode` is
 * `'local'`: its next request is decided locally); the memory store, and
 * a custom store without `health()`, are `up`.
 *
 * @publicApi
 */
@Injectable()
export class RateLimitHealthIndicator {
  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly healthIndicatorService: HealthIndicatorService,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS)
    private readonly options: Pick<ResolvedModuleOptions, 'failMode'>,
  ) {}

  async isHealthy<const Key extends string = 'rate-limit'>(
    key: Key = 'rate-limit' as Key,
    options: RateLimitHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new TypeError(
        `RateLimitHealthIndicator: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`,
      );
    const session = this.healthIndicatorService.check(key) as unknown as Session<Key>;
    const health = await this.storeHealth(timeoutMs);
    const { status, ...details } = this.withFallback(health);
    if (status === 'down') return session.down(details);
    if (status === 'degraded')
      return session.degraded
        ? session.degraded(details)
        : session.up({ ...details, degraded: true });
    return session.up(details);
  }

  /**
   * A store whose backend is down but that can decide locally, in a module
   * whose `failMode` is `'local'`, is degraded rather than down: the next
   * request will be decided by its fallback (the store cannot know the
   * module's fail mode, so it says `'down'` until its fallback is in use).
   */
  private withFallback(health: StoreHealth): StoreHealth {
    if (
      health.status !== 'down' ||
      this.options.failMode !== 'local' ||
      this.store.localFallback === undefined
    )
      return health;
    return { ...health, status: 'degraded' };
  }

  /** The store's own answer; a store that has no `health()`, or whose `health()` breaks its promise and fails, is reported as such. */
  private async storeHealth(timeoutMs: number): Promise<StoreHealth> {
    const store = this.store;
    if (typeof store.health !== 'function') return { status: 'up', store: storeKind(store) };
    try {
      return await store.health({ timeoutMs });
    } catch (error) {
      return {
        status: 'down',
        store: storeKind(store),
        error: error instanceof Error ? error.message : String(error),
      };
    }
  }
}
