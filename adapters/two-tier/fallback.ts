import type { RelativeTime } from '../../lib/store/relative-time.js';
import type {
  BucketRef,
  ConsumeRequest,
  ConsumeResult,
  LocalFallback,
  RateLimitCheck,
  StoreLimit,
} from '../../lib/store/rate-limit-store.interface.js';
import { MemoryStore } from '../memory/index.js';
import type { RedisStore } from '../redis/index.js';

/** Key read by the recovery probe (never written). */
const PROBE_KEY = 'two-tier:probe';
const PROBE_LIMIT: StoreLimit = { algorithm: 'token-bucket', rate: 1, burst: 1 };

/**
 * What the local tier falls back on while Redis fails: a {@link MemoryStore}
 * enforcing `localShare` of each limit's rate and burst, and the state of
 * the fallback. The store {@link degrade}s when the module asks it to decide
 * locally; from then on a probe (a peek of a key never written, every
 * `probeIntervalMs` on an `unref()`'d timer) asks Redis whether it is back,
 * and the first answer from Redis, the probe's or any other, ends it
 * ({@link recover}): the fallback's buckets are forgotten, Redis is the truth
 * again.
 *
 * @internal
 */
export class Fallback {
  /** Switches to the fallback. */
  switches = 0;
  /** Decisions taken by the fallback's buckets. */
  decisions = 0;
  /** Returns to Redis after a fallback. */
  recoveries = 0;
  /** Probes sent to Redis. */
  probes = 0;

  private readonly memory = new MemoryStore();
  private degradedNow = false;
  private probing = false;
  private closed = false;
  private probeTimer: ReturnType<typeof setInterval> | undefined;

  /**
   * @param redis what the probe asks
   * @param time the store's relative frame: its last `now` dates the probes
   * @param localShare share (0, 1] of each limit the fallback enforces
   * @param probeIntervalMs time between probes while degraded
   */
  constructor(
    private readonly redis: RedisStore,
    private readonly time: RelativeTime,
    private readonly localShare: number,
    private readonly probeIntervalMs: number,
  ) {}

  /** True while decisions are taken by the fallback (Redis failed, not yet back). */
  get degraded(): boolean {
    return this.degradedNow;
  }

  /** Switches to the fallback and starts probing. False when it already was on it (or closed). */
  degrade(): boolean {
    if (this.degradedNow || this.closed) return false;
    this.degradedNow = true;
    this.switches++;
    this.probeTimer = setInterval(() => this.probe(), this.probeIntervalMs);
    this.probeTimer.unref();
    return true;
  }

  /** Redis answered: back to it, the fallback's buckets forgotten. */
  recover(): void {
    if (!this.degradedNow) return;
    this.degradedNow = false;
    this.recoveries++;
    this.stopProbing();
    // The fallback's buckets described a share of the limit: Redis is the truth again.
    this.memory.close();
  }

  /** Decides the checks at `indices` of `checks` from the local share of their limits (`now`: the request's). */
  consume(checks: readonly RateLimitCheck[], indices: readonly number[], now: number): ConsumeResult {
    this.decisions++;
    return this.memory.consume({ checks: indices.map((i) => this.scaled(checks[i]!)), now });
  }

  /** The fallback's buckets, without charging them (`now`: the request's). */
  peek(checks: readonly BucketRef[], now: number): ConsumeResult {
    return this.memory.peek({ checks: checks.map((check) => this.scaled(check)), now });
  }

  /** Forgets the fallback's buckets of `checks`. */
  reset(checks: readonly BucketRef[], now: number): void {
    this.memory.reset({ checks, now });
  }

  /** Stops probing for good, and forgets the fallback's buckets. */
  close(): void {
    this.closed = true;
    this.stopProbing();
    this.memory.close();
  }

  private probe(): void {
    if (this.probing || this.closed || !this.degradedNow) return;
    this.probing = true;
    this.probes++;
    this.redis.peek({ checks: [{ key: PROBE_KEY, limit: PROBE_LIMIT }], now: this.time.lastNow }).then(
      () => {
        this.probing = false;
        this.recover();
      },
      () => {
        this.probing = false;
      },
    );
  }

  private stopProbing(): void {
    if (this.probeTimer === undefined) return;
    clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  /** The fallback's share of a limit. */
  private scaled<T extends BucketRef>(check: T): T {
    const { limit } = check;
    return { ...check, limit: { ...limit, rate: limit.rate * this.localShare, burst: Math.max(1, limit.burst * this.localShare) } };
  }
}

/**
 * The {@link LocalFallback} capability a store exposes: `active` while
 * `fallback` is degraded, and the store's own local decision.
 */
export function localFallbackOf(fallback: Fallback, consumeLocally: (request: ConsumeRequest) => ConsumeResult): LocalFallback {
  return {
    get active() {
      return fallback.degraded;
    },
    consumeLocally,
  };
}
