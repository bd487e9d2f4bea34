import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  BlockRequest,
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  LocalFallback,
  HealthRequest,
  MaybePromise,
  RateLimitStore,
  RefundRequest,
  SettleRequest,
  StoreHealth,
  TokenBucketRequest,
} from '../../lib/store/rate-limit-store.interface.js';
import { allTokenBuckets } from '../../lib/store/rate-limit-store.interface.js';
import { RelativeTime } from '../../lib/store/relative-time.js';
import type { RedisStore } from '../redis/index.js';
import type { ConcurrencySlots } from '../../lib/store/concurrency-slots.interface.js';
import { BucketChanges } from './bucket-changes.js';
import { DenyCache } from './deny-cache.js';
import { Fallback, localFallbackOf, twoTierHealth } from './fallback.js';
import { GiveBackQueue } from './give-back-queue.js';
import { KeyTable } from './key-table.js';
import { newInstanceId } from './instance-id.js';
import { LeaseBook } from './lease-book.js';
import { RedisRoundTrip } from './redis-round-trip.js';
import { Decider, MAX_WAITS } from './decider.js';
import { resolveTwoTierOptions, type TwoTierStoreOptions } from './two-tier.options.js';
import type { TwoTierStoreStats } from './two-tier.stats.js';

/**
 * Memory in front of Redis: for hot keys, one Redis call per lease of
 * tokens rather than one per request, without ever going over the shared
 * limit.
 *
 * **Never over the limit.** Every token this instance admits was taken from
 * the Redis bucket first, atomically ({@link RedisStore.lease}): a Redis call
 * charges the request's cost and, for a key that is hot on this instance,
 * takes a few extra tokens along, which later requests spend locally and
 * synchronously. Unspent tokens go back to Redis when the lease expires
 * (`leaseTtlMs`), when the key is evicted, and at `close()`. So the Redis
 * bucket is never overdrawn; a leased token is only spent later than it was
 * taken (at most `leaseTtlMs`).
 *
 * **Sizing.** A key's demand on this instance is tracked as a decayed count
 * (no timer per key). A key seen for the first time, or rarely, asks for no
 * extra token: it costs exactly one Redis call per decision, as with
 * RedisStore; its first sighting within `leaseTtlMs` is RedisStore's own
 * call, and leaves only a mark in a fixed-size table (`sightings.ts`). A hot
 * key asks for half a `leaseTtlMs` of its demand, at most `maxLeaseShare`
 * of the burst.
 *
 * **Deny cache.** A key Redis denied stays denied locally until its retry
 * time, without asking again. For a hot key it lasts until a whole lease is
 * expected again, as after a lease that came back short: instances sharing a
 * saturated bucket then take batches, not the token or two that trickled in
 * (tokens accumulate in the Redis bucket meanwhile, up to its burst).
 *
 * **All or nothing.** If every check of a request can be served from its
 * lease, it is, synchronously. Otherwise one Redis call asks for the checks
 * lacking tokens, and the leased checks are charged only if Redis admits. A
 * check that is deny-cached denies the whole request without a call,
 * charging nothing.
 *
 * **Redis failure** (an error, not connected, no answer within `timeoutMs`):
 * the call rejects with {@link RateLimitStoreError} and the module applies
 * its `failMode`. For `'local'` it asks {@link localFallback}: a local
 * `MemoryStore` enforcing `localShare` of each limit decides until two
 * writes in a row reach Redis (probes of a key of its own, an `unref()`'d
 * timer every `probeIntervalMs`, or leases; see `fallback.ts`). Leases and
 * cached denials keep applying locally.
 *
 * **Window limits** (`fixed-window`, `sliding-window`) are not leased: a
 * request with a window check goes straight to Redis, all its checks in
 * the one script call `RedisStore.consume` makes, so windows are exactly
 * as RedisStore decides them and never over the global quota. Its token
 * bucket checks then skip this instance's leases (tokens already taken
 * from Redis stay leased: the bucket is charged again, never less). The
 * local fallback enforces `quota x localShare` per window.
 *
 * **One deadline per request.** A request needing Redis waits `timeoutMs` in
 * all, however many calls in flight for its keys it joins: a joined call
 * that fails fails it too, and its own call gets what is left.
 *
 * **Reported values.** Decisions are computed from this instance's view of
 * the bucket without its own lease, which is what RedisStore would answer
 * when no other instance touched the bucket meanwhile; with several
 * instances, `remaining` is this instance's estimate as of its last Redis call.
 *
 * Local state is bounded (`maxKeys`) and swept a couple of keys per decision;
 * two store-wide timers at most (lease expiry, probes), both `unref()`'d.
 *
 * @publicApi
 */
export class TwoTierStore implements RateLimitStore {
  /** The `store` attribute of metrics (with {@link stats}, the `two_tier.*` instruments). */
  readonly kind = 'two-tier';
  /** `concurrency` slots: the Redis store's. No local tier: a slot is held by one request until it ends, and every instance must see it. */
  readonly slots: ConcurrencySlots;
  /**
   * Decides from a local share of each limit while Redis fails: what the
   * module uses for requests whose `failMode` is `'local'`.
   */
  readonly localFallback: LocalFallback;
  private readonly redis: RedisStore;
  private readonly ownsRedis: boolean;
  private readonly time = new RelativeTime();
  // The parts this class orchestrates, a file each: per-key state (key-table.ts), leases (lease-book.ts,
  // sized by lease-sizing.ts), holds (deny-cache.ts), returns (give-back-queue.ts), fallback.ts, and the
  // Redis side of a decision (redis-round-trip.ts), the decision itself (decider.ts), and
  // peek/refund/block/reset (bucket-changes.ts).
  private readonly fallback: Fallback;
  private readonly giveBacks: GiveBackQueue;
  private readonly keys: KeyTable;
  private readonly leases: LeaseBook;
  private readonly denials = new DenyCache();
  private readonly roundTrip: RedisRoundTrip;
  private readonly decider: Decider;
  private readonly changes: BucketChanges;
  /** Requests whose Redis call failed: already counted when the module asks to decide them locally. */
  private readonly failed = new WeakSet<ConsumeRequest>();
  private closed = false;

  private decisionCount = 0;
  private localCount = 0;
  /** Redis calls for requests with a window check (peeks, refunds, blocks, resets: BucketChanges; give-backs and probes count theirs). */
  private redisCallCount = 0;

  constructor(options: TwoTierStoreOptions) {
    const settings = resolveTwoTierOptions(options);
    this.redis = settings.redis;
    this.ownsRedis = settings.ownsRedis;
    this.slots = this.redis.slots;
    this.fallback = new Fallback(
      this.redis,
      this.time,
      settings.localShare,
      settings.probeIntervalMs,
    );
    this.giveBacks = new GiveBackQueue(this.redis, this.time, this.fallback);
    // In a fleet, an expired lease waits a leaseTtlMs, owed, for its key's next pace to carry it back.
    this.keys = new KeyTable(
      settings.maxKeys,
      settings.leaseTtlMs,
      settings.clock,
      this.giveBacks,
      settings.instances > 1 ? settings.leaseTtlMs : 0,
    );
    this.leases = new LeaseBook(
      settings.leaseTtlMs,
      settings.maxLeaseShare,
      settings.clock,
      this.keys,
      this.giveBacks,
      this.denials,
      Math.random,
      settings.instances > 1,
      settings.instances,
      this.redis.clientTime,
    );
    this.roundTrip = new RedisRoundTrip(
      this.redis,
      this.keys,
      this.leases,
      this.giveBacks,
      this.fallback,
      this.failed,
      newInstanceId(),
    );
    // A pace past its end has nothing left to give back.
    this.keys.releasePace = (key, state) => {
      const now = this.time.relative(this.time.lastNow);
      if (state.paceUntil > now) this.roundTrip.releasePace(key, state, this.time.lastNow);
    };
    this.decider = new Decider(
      this.keys,
      this.leases,
      this.denials,
      this.roundTrip,
      this.fallback,
      this.redis.timeoutMs,
      this.time,
    );
    this.changes = new BucketChanges(
      this.redis,
      this.time,
      this.keys,
      this.leases,
      this.denials,
      this.giveBacks,
      this.fallback,
    );
    this.localFallback = localFallbackOf(this.fallback, (request) => this.consumeLocally(request));
  }

  /** The RedisStore behind the local tier. */
  get redisStore(): RedisStore {
    return this.redis;
  }

  /** True while decisions are taken by the local fallback (Redis failed, not yet back). */
  get degraded(): boolean {
    return this.fallback.degraded;
  }

  /** Redis' health, read with the fallback's state (see `twoTierHealth`). */
  health(request: HealthRequest): Promise<StoreHealth> {
    return twoTierHealth(this.closed, this.fallback, this.redis, request);
  }

  /** All counters at once. */
  stats(): TwoTierStoreStats {
    const { leases, giveBacks, fallback } = this;
    return {
      decisions: this.decisionCount,
      localDecisions: this.localCount + this.decider.localCount,
      redisCalls:
        this.redisCallCount +
        this.changes.calls +
        this.roundTrip.calls +
        giveBacks.calls +
        fallback.probes,
      leasesTaken: leases.taken,
      leasedTokens: leases.takenTokens,
      leasesReturned: giveBacks.returned,
      returnedTokens: giveBacks.returnedTokens,
      lostTokens: giveBacks.lostTokens,
      denyCacheHits: this.denials.hits,
      fallbacks: fallback.switches,
      fallbackDecisions: fallback.decisions,
      recoveries: fallback.recoveries,
      localKeys: this.keys.size,
      degraded: fallback.degraded,
    };
  }

  consume(request: ConsumeRequest): MaybePromise<ConsumeResult> {
    if (this.closed)
      return Promise.reject(new RateLimitStoreError('TwoTierStore: consume called after close()'));
    this.decisionCount++;
    const now = this.time.relative(request.now);
    // A step of the sweep, and each check's demand (what sizes its next lease).
    this.keys.sweep(now);
    if (!allTokenBuckets(request.checks)) return this.consumeInRedis(request);
    // Keys new here: RedisStore's call, and nothing kept unless denied (see KeyTable.firstSighting).
    if (this.keys.firstSighting(request.checks, now))
      return this.roundTrip.firstSighting(request as TokenBucketRequest, now);
    for (const check of request.checks) {
      const state = this.keys.stateOf(check, now);
      this.leases.observe(check, state, now);
      if (this.leases.paces.renewalDue(state, now))
        this.roundTrip.renewPace(check, state, now, request.now);
    }
    return this.decider.decide(request as TokenBucketRequest, now, 0, 0);
  }

  /**
   * A request with a window check: every check in one `RedisStore.consume`
   * (one script call), no lease. A failure is marked so that the module's
   * `'local'` fail mode does not count the request twice.
   */
  private consumeInRedis(request: ConsumeRequest): Promise<ConsumeResult> {
    return this.redis.consume(request).then(
      (result) => {
        this.redisCallCount++;
        return result;
      },
      (error: unknown) => {
        this.redisCallCount++;
        this.failed.add(request);
        throw error;
      },
    );
  }

  /**
   * {@link LocalFallback.consumeLocally}: decide without Redis, from leases,
   * cached denials and the local share of each limit; switches the store to
   * its fallback (and starts the probe) if it was not on it yet. Answers
   * synchronously.
   */
  private consumeLocally(request: ConsumeRequest): ConsumeResult {
    if (this.closed) throw new RateLimitStoreError('TwoTierStore: consume called after close()');
    const now = this.time.relative(request.now);
    if (!this.failed.delete(request)) {
      // A fresh request (the store was already degraded): count it as consume() would.
      this.decisionCount++;
      this.keys.sweep(now);
      if (allTokenBuckets(request.checks))
        for (const check of request.checks)
          this.leases.observe(check, this.keys.stateOf(check, now), now);
    }
    // Give-backs queued for a Redis that does not answer would be lost anyway.
    if (this.fallback.degrade()) this.giveBacks.loseQueued();
    if (!allTokenBuckets(request.checks)) {
      // Windows are never leased: the fallback's local share decides every check.
      this.localCount++;
      return this.fallback.consume(
        request.checks,
        request.checks.map((_, i) => i),
        request.now,
      );
    }
    return this.decider.decide(
      request as TokenBucketRequest,
      now,
      MAX_WAITS,
      0,
      true,
    ) as ConsumeResult;
  }

  /**
   * The buckets as Redis has them, seen without this instance's leases (the
   * fallback's local share while degraded). See {@link BucketChanges.peek}.
   */
  peek(request: BucketsRequest): MaybePromise<ConsumeResult> {
    if (this.closed)
      return Promise.reject(new RateLimitStoreError('TwoTierStore: peek called after close()'));
    return this.changes.peek(request);
  }

  /** Gives tokens back to the Redis buckets and this instance's view. See {@link BucketChanges.refund}. */
  refund(request: RefundRequest): MaybePromise<ConsumeResult> {
    if (this.closed)
      return Promise.reject(new RateLimitStoreError('TwoTierStore: refund called after close()'));
    return this.changes.refund(request);
  }

  /** Settles reservations in Redis and this instance's view. See {@link BucketChanges.settle}. */
  settle(request: SettleRequest): MaybePromise<ConsumeResult> {
    if (this.closed)
      return Promise.reject(new RateLimitStoreError('TwoTierStore: settle called after close()'));
    return this.changes.settle(request);
  }

  /** Blocks the Redis buckets (a penalty) and this instance's view. See {@link BucketChanges.block}. */
  block(request: BlockRequest): MaybePromise<ConsumeResult> {
    if (this.closed)
      return Promise.reject(new RateLimitStoreError('TwoTierStore: block called after close()'));
    return this.changes.block(request);
  }

  /** Forgets the buckets locally and in Redis. See {@link BucketChanges.reset}. */
  reset(request: BucketsRequest): MaybePromise<void> {
    if (this.closed)
      return Promise.reject(new RateLimitStoreError('TwoTierStore: reset called after close()'));
    return this.changes.reset(request);
  }

  /**
   * Gives every unspent lease back to Redis (waiting at most the Redis
   * timeout), stops the timers, and closes the RedisStore if the store built
   * it. The Redis client is never closed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fallback.close();
    this.leases.close();
    this.giveBacks.flush();
    await Promise.all([this.giveBacks.settled(), this.roundTrip.paceReleases()]);
    this.keys.clear();
    if (this.ownsRedis) this.redis.close();
  }
}
