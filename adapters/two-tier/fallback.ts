import type { RelativeTime } from '../../lib/store/relative-time.js';
import type {
  BucketRef,
  ConsumeRequest,
  ConsumeResult,
  HealthRequest,
  LocalFallback,
  RateLimitCheck,
  StoreHealth,
  StoreLimit,
} from '../../lib/store/rate-limit-store.interface.js';
import { isWindowLimit } from '../../lib/store/rate-limit-store.interface.js';
import { MemoryStore } from '../memory/index.js';
import type { RedisStore } from '../redis/index.js';

/**
 * Key the recovery probe writes (under the store's prefix): a bucket of 1000
 * tokens/s that a probe charges one token, so that every probe stores a value
 * (`SET ... PX`, a few milliseconds at most) and never is denied.
 */
const PROBE_KEY = 'two-tier:probe';
const PROBE_LIMIT: StoreLimit = { algorithm: 'token-bucket', rate: 1000, burst: 1_000_000 };
/** Consecutive successful writes (probes or leases) that end a fallback. */
export const RECOVERY_SUCCESSES = 2;

/**
 * What the local tier falls back on while Redis fails: a {@link MemoryStore}
 * enforcing `localShare` of each limit's rate and burst, and the state of
 * the fallback. The store {@link degrade}s when the module asks it to decide
 * locally; from then on a probe (every `probeIntervalMs` on an `unref()`'d
 * timer) asks Redis whether it is back **on the write path**: it leases one
 * token of a probe key, a script call that stores a value, so a Redis that
 * answers reads but refuses writes (out of memory under `noeviction`, a
 * read-only replica after a failover) is not taken for a healthy one. The
 * fallback ends ({@link recover}) after {@link RECOVERY_SUCCESSES}
 * consecutive successful writes, the probe's or the store's own leases; any
 * failure in between starts the count again.
 *
 * The fallback's buckets are kept when it ends: a Redis that flaps (back,
 * failing again) resumes them where they were instead of handing out a
 * fresh local burst at every switch. Kept buckets cost nothing: a bucket
 * left alone refills, exactly as a forgotten one would be.
 *
 * **Windows.** A window limit is enforced here with `quota x share` per
 * window, strictly (a cost above it is denied while the fallback lasts).
 *
 * **Local share.** A limit `{ rate, burst }` is enforced here as
 * `{ rate x share, burst x share }`, fractions kept, so that `n` instances at
 * `share = 1 / n` together never admit more than the limit from the moment
 * they fall back: at most `burst + rate x T` over `T`. When a request's
 * cost is more than the local burst (a burst of 1 over 4 instances is a
 * quarter token each), the local bucket may fill up to that cost, but a key
 * starts the fallback at its share (as if it had filled since the fallback
 * began, the first local decision): such a request is admitted once
 * `(cost - burst x share) / (rate x share)` has passed since then, and
 * afterwards once per `cost / (rate x share)`. At one instant a fleet
 * falling back together thus admits at most `burst`.
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
  /** Consecutive successful writes since the last failure (while degraded). */
  private successes = 0;
  /** The first local decision's `now` (module clock) since the last switch: where local buckets start at their share. */
  private origin: number | undefined;

  private readonly memory = new MemoryStore();
  private degradedNow = false;
  private probing = false;
  private closed = false;
  private probeTimer: ReturnType<typeof setInterval> | undefined;
  /** Told of every switch (the module's fallback events); a switch is rare, so a set costs nothing. */
  private readonly watchers = new Set<(active: boolean) => void>();

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
    this.successes = 0;
    this.origin = undefined;
    this.probeTimer = setInterval(() => this.probe(), this.probeIntervalMs);
    this.probeTimer.unref();
    this.tell(true);
    return true;
  }

  /** Be told of every switch; returns the function that stops it. */
  watch(listener: (active: boolean) => void): () => void {
    this.watchers.add(listener);
    return () => {
      this.watchers.delete(listener);
    };
  }

  /** A watcher that throws must not break the switch (it runs inside a store call). */
  private tell(active: boolean): void {
    for (const watcher of this.watchers) {
      try {
        watcher(active);
      } catch {
        // the module's watcher publishes on a channel, whose subscribers contain their own errors
      }
    }
  }

  /**
   * A write reached Redis (a probe, a lease): after
   * {@link RECOVERY_SUCCESSES} in a row, back to it. The fallback's buckets
   * are kept (see the class comment).
   */
  succeeded(): void {
    if (!this.degradedNow) return;
    if (++this.successes >= RECOVERY_SUCCESSES) this.recover();
  }

  /** A call to Redis failed: the count of successes starts again. */
  failed(): void {
    this.successes = 0;
  }

  /** Back to Redis now (the fallback's buckets kept). */
  recover(): void {
    if (!this.degradedNow) return;
    this.degradedNow = false;
    this.recoveries++;
    this.stopProbing();
    this.tell(false);
  }

  /** Decides the checks at `indices` of `checks` from the local share of their limits (`now`: the request's). */
  consume(
    checks: readonly RateLimitCheck[],
    indices: readonly number[],
    now: number,
  ): ConsumeResult {
    this.decisions++;
    const origin = (this.origin ??= now);
    for (let j = 0; j < indices.length; j++) {
      const check = checks[indices[j]!]!;
      if (isWindowLimit(check.limit)) continue;
      const { rate, burst } = check.limit;
      const localBurst = burst * this.localShare;
      // A cost above the local burst: not before the bucket could have filled up to it since the origin.
      if (
        check.cost > localBurst &&
        check.cost <= burst &&
        now < origin + ((check.cost - localBurst) * 1000) / (rate * this.localShare)
      ) {
        return this.notYet(checks, indices, now, origin);
      }
    }
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
    this.redis
      .lease({
        checks: [{ key: PROBE_KEY, limit: PROBE_LIMIT, cost: 1, maxExtra: 0 }],
        now: this.time.lastNow,
      })
      .then(
        () => {
          this.probing = false;
          this.succeeded();
        },
        () => {
          this.probing = false;
          this.failed();
        },
      );
  }

  /**
   * A request denied because one of its checks costs more than its local
   * burst and the fallback began too recently (see the class comment):
   * charged nothing; such checks report the wait, the others their bucket.
   */
  private notYet(
    checks: readonly RateLimitCheck[],
    indices: readonly number[],
    now: number,
    origin: number,
  ): ConsumeResult {
    const { decisions } = this.memory.peek({
      checks: indices.map((i) => this.scaled(checks[i]!)),
      now,
    });
    return {
      allowed: false,
      decisions: indices.map((i, j) => {
        const check = checks[i]!;
        if (isWindowLimit(check.limit)) return decisions[j]!;
        const localRate = check.limit.rate * this.localShare;
        const localBurst = check.limit.burst * this.localShare;
        if (check.cost <= localBurst || check.cost > check.limit.burst) return decisions[j]!;
        const retryAfterMs = Math.max(
          0,
          origin + ((check.cost - localBurst) * 1000) / localRate - now,
        );
        return {
          allowed: false,
          remaining: 0,
          retryAfterMs,
          resetMs: decisions[j]!.resetMs,
          reason: 'limit',
        };
      }),
    };
  }

  private stopProbing(): void {
    if (this.probeTimer === undefined) return;
    clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  /**
   * The fallback's share of a limit: rate and burst times `localShare`,
   * fractions kept; the bucket may hold up to a check's cost when that is
   * more (see the class comment).
   */
  private scaled<T extends BucketRef>(check: T): T {
    const { limit } = check;
    // A window's share is strict: n instances at 1/n never admit more than
    // its quota in a window, and a cost above the local share is denied.
    if (isWindowLimit(limit))
      return { ...check, limit: { ...limit, quota: limit.quota * this.localShare } };
    const cost = (check as Partial<RateLimitCheck>).cost ?? 0;
    return {
      ...check,
      limit: {
        ...limit,
        rate: limit.rate * this.localShare,
        burst: Math.max(Math.min(cost, limit.burst), limit.burst * this.localShare),
      },
    };
  }
}

/**
 * The {@link LocalFallback} capability a store exposes: `active` while
 * `fallback` is degraded, and the store's own local decision.
 */
export function localFallbackOf(
  fallback: Fallback,
  consumeLocally: (request: ConsumeRequest) => ConsumeResult,
): LocalFallback {
  return {
    get active() {
      return fallback.degraded;
    },
    consumeLocally,
    watch: (listener) => fallback.watch(listener),
  };
}

/**
 * A two-tier store's health: Redis' (a PING), read with the fallback's
 * state. While the fallback decides, the store is `'degraded'` (limits hold
 * at their local share), even if Redis answers again before the probes end
 * the fallback.
 */
export async function twoTierHealth(
  closed: boolean,
  fallback: Fallback,
  redis: RedisStore,
  request: HealthRequest,
): Promise<StoreHealth> {
  if (closed) return { status: 'down', store: 'two-tier', error: 'TwoTierStore: closed' };
  const health = await redis.health(request);
  return { ...health, status: fallback.degraded ? 'degraded' : health.status, store: 'two-tier' };
}
