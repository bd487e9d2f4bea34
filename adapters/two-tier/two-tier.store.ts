import { emissionIntervalMs, gcraConsume, gcraPeek, gcraRefund, type RateLimitDecision } from '../../lib/algorithms/gcra.js';
import { RateLimitStoreError, toStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  BucketRef,
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  LocalFallback,
  MaybePromise,
  RateLimitCheck,
  RateLimitStore,
  RefundRequest,
  StoreLimit,
} from '../../lib/store/rate-limit-store.interface.js';
import { MemoryStore } from '../memory/index.js';
import { MapCursor } from '../../lib/store/map-cursor.js';
import { RedisStore, type LeaseCheck, type LeaseResult, type RedisClient, type RedisStoreOptions } from '../redis/index.js';

/**
 * Options of {@link TwoTierStore}. Give either `client` (the store then builds
 * its own {@link RedisStore} with the Redis options below) or `redis` (an
 * existing RedisStore, which `close()` leaves open).
 */
export interface TwoTierStoreOptions extends Partial<Omit<RedisStoreOptions, 'client'>> {
  /** The Redis connection (an ioredis `Redis` or `Cluster`, or any {@link RedisClient}). Never closed by the store. */
  readonly client?: RedisClient;
  /**
   * An existing RedisStore to put the local tier in front of, instead of
   * `client`. Its own options (prefix, timeout, time) apply; do not combine
   * with the Redis options here.
   */
  readonly redis?: RedisStore;
  /**
   * How many application instances share the Redis buckets. Only used for
   * the default of {@link localShare}: during a Redis outage each instance
   * enforces `1 / instances` of every limit on its own.
   * @default 1
   */
  readonly instances?: number;
  /**
   * Share (0 < share <= 1) of each limit's rate and burst that this instance
   * enforces on its own while Redis is unreachable, for requests whose
   * `failMode` is `'local'`.
   * @default 1 / instances
   */
  readonly localShare?: number;
  /**
   * Longest time leased tokens are held locally, in milliseconds of the
   * store's `clock`. Tokens not spent by then are given back to Redis. Also
   * the window over which the store measures a key's local demand.
   * @default 1000
   */
  readonly leaseTtlMs?: number;
  /**
   * Largest lease, as a share of the bucket's burst (0 disables leases: every
   * decision is one Redis call, and only the deny cache saves calls). A
   * lease is sized from the key's demand on this instance (half a
   * `leaseTtlMs` of it) and capped by `floor(maxLeaseShare x burst)`.
   * @default 0.25
   */
  readonly maxLeaseShare?: number;
  /**
   * Hard cap on the keys the local tier tracks (leases, cached denials,
   * demand). Past it, the least recently used key is dropped (its lease given
   * back): it only costs that key Redis calls again.
   * @default 100_000
   */
  readonly maxKeys?: number;
  /**
   * How often, in milliseconds, Redis is probed while the store runs on its
   * local fallback.
   * @default 1000
   */
  readonly probeIntervalMs?: number;
  /**
   * Clock for lease expiry (milliseconds). Decisions use each request's
   * `now`, like every store; leases are timed by this clock because they
   * also expire when no request comes. Tests inject a manual one.
   * @default performance.now()
   */
  readonly clock?: { now(): number };
}

/** A snapshot of {@link TwoTierStore}'s counters (all since start). */
export interface TwoTierStoreStats {
  /** `consume` calls answered. */
  readonly decisions: number;
  /** `consume` calls answered without waiting for Redis (lease, deny cache, fallback). */
  readonly localDecisions: number;
  /** Calls made to Redis: decisions with or without lease, give-backs, peeks, resets, probes. */
  readonly redisCalls: number;
  /** Redis answers that granted extra tokens (a lease). */
  readonly leasesTaken: number;
  /** Extra tokens leased from Redis. */
  readonly leasedTokens: number;
  /** Leases whose unspent tokens were given back (expiry, eviction, close). */
  readonly leasesReturned: number;
  /** Unspent tokens given back to Redis. */
  readonly returnedTokens: number;
  /** Unspent tokens that could not be given back (Redis failing, or the store running on its fallback). */
  readonly lostTokens: number;
  /** Requests denied by the local deny cache, without asking Redis. */
  readonly denyCacheHits: number;
  /** Switches to the local fallback (Redis failed). */
  readonly fallbacks: number;
  /** Decisions taken by the local fallback. */
  readonly fallbackDecisions: number;
  /** Returns to Redis after a fallback (a probe succeeded). */
  readonly recoveries: number;
  /** Keys currently tracked by the local tier. */
  readonly localKeys: number;
  /** True while the store runs on its local fallback. */
  readonly degraded: boolean;
}

/** Local state of one bucket key. */
interface KeyState {
  /** Limit last seen for the key (a cached denial only holds for the same limit). */
  rate: number;
  burst: number;
  /** Demand: tokens asked, decayed with time constant `leaseTtlMs`, as of `seenAt`. */
  score: number;
  seenAt: number;
  /** When the key started being tracked (a young key's demand is its count over its age). */
  firstSeen: number;
  /** Extra tokens worth leasing for the next Redis call (from the demand before this request). */
  target: number;
  /**
   * The bucket as this instance last saw it, without its own lease: the
   * theoretical arrival time in the store's relative frame. What decisions
   * report (exactly what RedisStore would answer when no other instance
   * touched the bucket since).
   */
  shadowTat: number | undefined;
  /** Bucket time held locally (leased tokens x emission interval, in ms). */
  leaseMs: number;
  /** When the lease must be given back (store clock). */
  leaseExpiresAt: number;
  /** No Redis call for this key before this (relative ms): cached denial or batch hold. */
  denyUntil: number;
  /** The cost that was denied (a cheaper request is asked of Redis). */
  denyCost: number;
  /**
   * How many instances seem to drain this bucket (>= 1): doubled when a hot
   * key's call comes back short, decayed when it gets a whole lease. Spaces
   * this instance's calls so that each finds a batch.
   */
  contention: number;
  /** Settles when this key's Redis call in flight is answered. */
  pending: Promise<unknown> | undefined;
}

/** A lease spent ahead of a Redis call, put back if the request is denied. */
interface Reservation {
  readonly index: number;
  readonly key: string;
  readonly state: KeyState;
  readonly outcome: { readonly tat: number; readonly decision: RateLimitDecision };
  readonly previous: number | undefined;
  readonly chargedMs: number;
  readonly leaseMs: number;
}

/** Tokens to hand back to Redis. */
interface Return {
  readonly key: string;
  readonly limit: StoreLimit;
  readonly tokens: number;
}

const TOKEN_EPSILON = 1e-9;
/** A lease is sized to cover half a `leaseTtlMs` of demand, so it is usually spent before it expires. */
const LEASE_DEMAND_SHARE = 0.5;
/**
 * From this lease size on, a key is hot: after Redis denies it, or leases it
 * fewer tokens than wanted, the next call waits until a whole lease can be
 * taken (see the class comment). Below it, the wait would save nothing.
 */
const HOT_LEASE = 4;
/** Tokens a key must have asked for (decayed) before it gets a lease: a key seen once or twice gets none. */
const MIN_DEMAND = 2;
/** Shortest window over which a young key's demand is measured, as a share of `leaseTtlMs`. */
const MIN_DEMAND_AGE = 0.1;
/**
 * Longest hold, as a share of the burst: a bucket that nobody drains while
 * every instance holds would refill this much, so never enough to overflow
 * and waste tokens.
 */
const MAX_HOLD_SHARE = 0.5;
/** Largest {@link KeyState.contention}. */
const MAX_CONTENTION = 16;
/** Factor applied to {@link KeyState.contention} after a whole lease. */
const CONTENTION_DECAY = 0.75;
/** Entries examined by the incremental sweep on each decision. */
const SWEEP_STEP = 2;
/** Keys per give-back call. */
const RETURN_BATCH = 64;
/** Waits for another request's Redis call on the same key before calling Redis anyway. */
const MAX_WAITS = 2;
/** Key read by the recovery probe (never written). */
const PROBE_KEY = 'two-tier:probe';
const PROBE_LIMIT: StoreLimit = { algorithm: 'token-bucket', rate: 1, burst: 1 };

const defaultClock = { now: () => performance.now() };

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
 * RedisStore, and leaves nothing behind. A hot key asks for half a
 * `leaseTtlMs` of its demand, at most `maxLeaseShare` of the burst.
 *
 * **Deny cache.** A key Redis denied stays denied locally until its retry
 * time, without asking again (`retryAfterMs` reports the time left). For a
 * hot key the entry lasts until a whole lease is expected to be available
 * again, and the same wait follows a lease that came back short (the bucket
 * ran dry): when several instances share a saturated bucket, each Redis call
 * then takes a batch instead of the one or two tokens that trickled in.
 * Tokens are not lost meanwhile, they accumulate in the Redis bucket (up to
 * its burst).
 *
 * **All or nothing.** If every check of a request can be served from its
 * lease, it is, synchronously. Otherwise one Redis call asks for the checks
 * lacking tokens, and the leased checks are charged only if Redis admits. A
 * check that is deny-cached denies the whole request without a call,
 * charging nothing.
 *
 * **Redis failure** (an error, not connected, no answer within `timeoutMs`).
 * What happens is the request's `failMode` (the module's, or a limit's):
 * - `'local'`: the decision is taken by a local {@link MemoryStore} enforcing
 *   `localShare` of each limit, and so is every `'local'` decision after it
 *   until a background probe (an `unref()`'d timer, every `probeIntervalMs`)
 *   or any successful Redis call finds Redis healthy again.
 * - `'open'` / `'closed'` (or none, as for direct callers): the call rejects
 *   with {@link RateLimitStoreError} and the module resolves it, as with
 *   RedisStore.
 *
 * Either way, tokens already leased and denials already cached keep being
 * applied locally.
 *
 * **Reported values.** Decisions are computed from this instance's view of
 * the bucket without its own lease, which is what RedisStore would answer
 * when no other instance touched the bucket meanwhile; with several
 * instances, `remaining` is this instance's estimate as of its last Redis call.
 *
 * Local state is bounded (`maxKeys`), swept incrementally (a couple of keys
 * per decision), and uses two store-wide timers at most (lease expiry while
 * leases are held, probes while degraded), both `unref()`'d.
 *
 * @publicApi
 */
export class TwoTierStore implements RateLimitStore {
  /**
   * Decides from a local share of each limit while Redis fails: what the
   * module uses for requests whose `failMode` is `'local'`.
   */
  readonly localFallback: LocalFallback = ((store: TwoTierStore): LocalFallback => ({
    get active() {
      return store.degradedNow;
    },
    consumeLocally: (request) => store.consumeLocally(request),
  }))(this);
  /** The last request whose Redis call failed: already counted when the module asks to decide it locally. */
  private lastFailed: ConsumeRequest | undefined;
  private readonly redis: RedisStore;
  private readonly ownsRedis: boolean;
  private readonly fallback = new MemoryStore();
  private readonly localShare: number;
  private readonly leaseTtlMs: number;
  private readonly maxLeaseShare: number;
  private readonly maxKeys: number;
  private readonly probeIntervalMs: number;
  private readonly clock: { now(): number };

  private readonly states = new Map<string, KeyState>();
  private readonly sweepCursor = new MapCursor(this.states);
  private readonly evictionCursor = new MapCursor(this.states);
  /** Keys holding a lease (what the expiry timer scans). */
  private readonly leased = new Set<string>();
  private returns: Return[] = [];
  private returnsScheduled = false;
  private readonly inFlightReturns = new Set<Promise<unknown>>();
  private leaseTimer: ReturnType<typeof setInterval> | undefined;
  private probeTimer: ReturnType<typeof setInterval> | undefined;
  private probing = false;
  private degradedNow = false;
  private closed = false;
  /** Origin of the relative time frame (first `now` seen), as in MemoryStore. */
  private epoch: number | undefined;
  private lastNow = 0;

  private decisionCount = 0;
  private localCount = 0;
  private redisCallCount = 0;
  private leaseCount = 0;
  private leasedTokenCount = 0;
  private returnCount = 0;
  private returnedTokenCount = 0;
  private lostTokenCount = 0;
  private denyHitCount = 0;
  private fallbackCount = 0;
  private fallbackDecisionCount = 0;
  private recoveryCount = 0;

  constructor(options: TwoTierStoreOptions) {
    if (!options || typeof options !== 'object') throw new TypeError('TwoTierStore: options must be an object with client or redis');
    const { client, redis, instances, localShare, leaseTtlMs, maxLeaseShare, maxKeys, probeIntervalMs, clock, ...redisOptions } =
      options;
    if (redis !== undefined) {
      if (!(redis instanceof RedisStore)) throw new TypeError('TwoTierStore: redis must be a RedisStore');
      if (client !== undefined) throw new TypeError('TwoTierStore: give either client or redis, not both');
      const extra = Object.keys(redisOptions).filter((name) => (redisOptions as Record<string, unknown>)[name] !== undefined);
      if (extra.length > 0) {
        throw new TypeError(`TwoTierStore: ${extra.join(', ')} cannot be combined with redis (set them on the RedisStore)`);
      }
      this.redis = redis;
      this.ownsRedis = false;
    } else {
      if (client === undefined) throw new TypeError('TwoTierStore: client (a Redis client) or redis (a RedisStore) is required');
      this.redis = new RedisStore({ ...redisOptions, client });
      this.ownsRedis = true;
    }

    const count = instances ?? 1;
    if (!Number.isSafeInteger(count) || count < 1) {
      throw new TypeError(`TwoTierStore: instances must be a positive integer, got ${String(instances)}`);
    }
    this.localShare = localShare ?? 1 / count;
    if (typeof this.localShare !== 'number' || !(this.localShare > 0 && this.localShare <= 1)) {
      throw new TypeError(`TwoTierStore: localShare must be a number in (0, 1], got ${String(localShare)}`);
    }
    this.leaseTtlMs = positive('leaseTtlMs', leaseTtlMs, 1000);
    this.probeIntervalMs = positive('probeIntervalMs', probeIntervalMs, 1000);
    this.maxLeaseShare = maxLeaseShare ?? 0.25;
    if (typeof this.maxLeaseShare !== 'number' || !(this.maxLeaseShare >= 0 && this.maxLeaseShare <= 1)) {
      throw new TypeError(`TwoTierStore: maxLeaseShare must be a number in [0, 1], got ${String(maxLeaseShare)}`);
    }
    this.maxKeys = maxKeys ?? 100_000;
    if (!Number.isSafeInteger(this.maxKeys) || this.maxKeys < 1) {
      throw new TypeError(`TwoTierStore: maxKeys must be a positive integer, got ${String(maxKeys)}`);
    }
    if (clock !== undefined && typeof clock?.now !== 'function') throw new TypeError('TwoTierStore: clock must have a now() method');
    this.clock = clock ?? defaultClock;
  }

  /** The RedisStore behind the local tier. */
  get redisStore(): RedisStore {
    return this.redis;
  }

  /** True while decisions are taken by the local fallback (Redis failed, not yet back). */
  get degraded(): boolean {
    return this.degradedNow;
  }

  /** All counters at once. */
  stats(): TwoTierStoreStats {
    return {
      decisions: this.decisionCount,
      localDecisions: this.localCount,
      redisCalls: this.redisCallCount,
      leasesTaken: this.leaseCount,
      leasedTokens: this.leasedTokenCount,
      leasesReturned: this.returnCount,
      returnedTokens: this.returnedTokenCount,
      lostTokens: this.lostTokenCount,
      denyCacheHits: this.denyHitCount,
      fallbacks: this.fallbackCount,
      fallbackDecisions: this.fallbackDecisionCount,
      recoveries: this.recoveryCount,
      localKeys: this.states.size,
      degraded: this.degradedNow,
    };
  }

  consume(request: ConsumeRequest): MaybePromise<ConsumeResult> {
    if (this.closed) return Promise.reject(new RateLimitStoreError('TwoTierStore: consume called after close()'));
    this.decisionCount++;
    const { checks } = request;
    const now = this.relative(request.now);
    this.sweep(now);
    for (const check of checks) this.observe(check, now);
    return this.decide(request, now, 0);
  }

  /**
   * {@link LocalFallback.consumeLocally}: decide without Redis, from leases,
   * cached denials and the local share of each limit; switches the store to
   * its fallback (and starts the probe) if it was not on it yet. Answers
   * synchronously.
   */
  private consumeLocally(request: ConsumeRequest): ConsumeResult {
    if (this.closed) throw new RateLimitStoreError('TwoTierStore: consume called after close()');
    const now = this.relative(request.now);
    if (request !== this.lastFailed) {
      // A fresh request (the store was already degraded): count it as consume() would.
      this.decisionCount++;
      this.sweep(now);
      for (const check of request.checks) this.observe(check, now);
    }
    this.lastFailed = undefined;
    this.degrade();
    return this.decide(request, now, MAX_WAITS, true) as ConsumeResult;
  }

  /**
   * The buckets as Redis has them, seen without this instance's leases.
   * While the store runs on its local fallback, the fallback's buckets (the
   * local share) instead. A Redis failure rejects: a peek has no `failMode`.
   */
  peek(request: BucketsRequest): MaybePromise<ConsumeResult> {
    if (this.closed) return Promise.reject(new RateLimitStoreError('TwoTierStore: peek called after close()'));
    const { checks } = request;
    if (checks.length === 0) return { allowed: true, decisions: [] };
    const now = this.relative(request.now);
    if (this.degradedNow) return this.fallback.peek({ checks: checks.map((check) => this.scaled(check)), now: request.now });
    this.redisCallCount++;
    return this.redis.peek(request).then(
      (result) => ({
        allowed: true,
        decisions: result.decisions.map((decision, i) => {
          const check = checks[i]!;
          const state = this.states.get(check.key);
          if (!state || (state.leaseMs <= 0 && state.shadowTat === undefined)) return decision;
          // Redis counts this instance's lease as taken, and counts the
          // tokens it spent from its lease as taken when leased, earlier:
          // report the bucket without the lease, and no fuller than this
          // instance's own view of it (charged when spent).
          const redisTat = now + decision.resetMs - state.leaseMs;
          const tat = state.shadowTat === undefined || state.shadowTat < redisTat ? redisTat : state.shadowTat;
          return gcraPeek(tat, now, check.limit);
        }),
      }),
    );
  }

  /**
   * Gives tokens back to the Redis buckets (and to this instance's view of
   * them, whose cached denials no longer hold). Rejects when Redis cannot be
   * reached: the caller asked for the shared bucket to change.
   */
  refund(request: RefundRequest): MaybePromise<ConsumeResult> {
    if (this.closed) return Promise.reject(new RateLimitStoreError('TwoTierStore: refund called after close()'));
    const now = this.relative(request.now);
    for (const check of request.checks) {
      const state = this.states.get(check.key);
      if (state === undefined) continue;
      // A lease held here was taken from the Redis bucket: it goes back first
      // (same connection, sent before the refund), or a refund that fills the
      // bucket would let this instance spend the lease on top of a full bucket.
      if (state.leaseMs > 0) this.returnLease(check.key, state);
      state.shadowTat = gcraRefund(state.shadowTat, now, check.limit, check.cost);
      state.denyUntil = Number.NEGATIVE_INFINITY;
    }
    this.flushReturns();
    this.redisCallCount++;
    return this.redis.refund(request);
  }

  /**
   * Forgets the buckets locally (leases dropped: the Redis bucket they came
   * from is deleted, so full again) and in Redis. Rejects when Redis cannot
   * be reached: the caller asked for the shared bucket to change.
   */
  reset(request: BucketsRequest): MaybePromise<void> {
    if (this.closed) return Promise.reject(new RateLimitStoreError('TwoTierStore: reset called after close()'));
    const { checks } = request;
    if (checks.length === 0) return;
    for (const check of checks) {
      if (this.states.delete(check.key)) this.leased.delete(check.key);
    }
    this.fallback.reset({ checks, now: request.now });
    this.redisCallCount++;
    return this.redis.reset(request);
  }

  /**
   * Gives every unspent lease back to Redis (waiting at most the Redis
   * timeout), stops the timers, and closes the RedisStore if the store built
   * it. The Redis client is never closed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopProbing();
    this.stopLeaseTimer();
    for (const key of [...this.leased]) {
      const state = this.states.get(key);
      if (state) this.returnLease(key, state);
    }
    this.flushReturns();
    await Promise.allSettled([...this.inFlightReturns]);
    this.states.clear();
    this.fallback.close();
    if (this.ownsRedis) this.redis.close();
  }

  // ---------------------------------------------------------------- decisions

  /**
   * Decide from local state when possible (synchronous answer), else with one
   * Redis call. `waits`: how many times this request already waited for
   * another request's call on the same key.
   */
  private decide(request: ConsumeRequest, now: number, waits: number, local = false): MaybePromise<ConsumeResult> {
    const { checks } = request;
    const count = checks.length;
    if (count === 0) return { allowed: true, decisions: [] };
    let remote: number[] | undefined;
    let leased: number[] | undefined;
    let denied = false;
    let denyHit = false;
    const states: KeyState[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const check = checks[i]!;
      const state = (states[i] = this.stateOf(check, now));
      if (check.cost > check.limit.burst + TOKEN_EPSILON) {
        denied = true;
        continue;
      }
      if (this.leaseCovers(check, state)) {
        // The lease has the tokens, but the bucket itself must admit too (a
        // limit that shrank, a clock that went back).
        if (gcraConsume(state.shadowTat, now, check.limit, check.cost).decision.allowed) (leased ??= []).push(i);
        else denied = true;
        continue;
      }
      if (this.denyActive(check, state, now)) {
        denied = true;
        denyHit = true;
        continue;
      }
      (remote ??= []).push(i);
    }

    if (denied) {
      if (denyHit) this.denyHitCount++;
      this.localCount++;
      return { allowed: false, decisions: checks.map((check, i) => this.localDecision(check, states[i]!, now)) };
    }
    if (remote === undefined) {
      this.localCount++;
      const decisions: RateLimitDecision[] = new Array(count);
      for (let i = 0; i < count; i++) decisions[i] = this.spend(checks[i]!, states[i]!, now).decision;
      return { allowed: true, decisions };
    }
    if (local) return this.decideLocally(request, now, states, remote, leased ?? []);

    if (waits < MAX_WAITS) {
      // Another request is already asking Redis for this key: its answer
      // (a lease, a denial) probably decides this one too, without a call.
      let pending: Promise<unknown>[] | undefined;
      for (const i of remote) {
        const wait = states[i]!.pending;
        if (wait) (pending ??= []).push(wait);
      }
      if (pending) return Promise.all(pending).then(() => this.decide(request, now, waits + 1));
    }
    return this.decideWithRedis(request, now, states, remote, leased ?? []);
  }

  /** One Redis call for the checks lacking tokens; leased checks are charged only if it admits. */
  private decideWithRedis(
    request: ConsumeRequest,
    now: number,
    all: KeyState[],
    remote: number[],
    leased: number[],
  ): Promise<ConsumeResult> {
    const { checks } = request;
    const reservations: Reservation[] = leased.map((index) => this.reserve(index, checks[index]!, all[index]!, now));
    const states = remote.map((i) => all[i]!);
    const leaseChecks: LeaseCheck[] = remote.map((i, j) => {
      const check = checks[i]!;
      return { key: check.key, limit: check.limit, cost: check.cost, maxExtra: states[j]!.target };
    });
    // A leftover too small for this request (fractional costs, a rate that
    // changed) goes back first, in the same pipeline: Redis then decides on
    // the bucket as if this instance had never held it, as the view assumes.
    remote.forEach((i, j) => {
      if (states[j]!.leaseMs > 0) this.returnLease(checks[i]!.key, states[j]!);
    });
    // Tokens due back go first: Redis must not count them as taken when it decides.
    this.flushReturns();
    this.redisCallCount++;
    const call = this.redis.lease({ checks: leaseChecks, now: request.now });
    const settle = () => {
      for (const state of states) if (state.pending === settled) state.pending = undefined;
    };
    const answered = call.then(
      (result) => {
        settle();
        // Any answer from Redis means it is reachable again.
        this.recover();
        return this.applyAnswer(request, now, remote, states, reservations, result);
      },
      (error: unknown) => {
        settle();
        for (let r = reservations.length - 1; r >= 0; r--) this.unreserve(reservations[r]!);
        this.lastFailed = request;
        throw toStoreError(error, 'TwoTierStore: Redis failed');
      },
    );
    // What requests waiting on this key await: never rejects.
    const settled: Promise<unknown> = answered.then(noop, noop);
    for (const state of states) state.pending = settled;
    return answered;
  }

  private applyAnswer(
    request: ConsumeRequest,
    now: number,
    remote: number[],
    states: KeyState[],
    reservations: Reservation[],
    result: LeaseResult,
  ): ConsumeResult {
    const { checks } = request;
    const decisions: RateLimitDecision[] = new Array(checks.length);
    const { allowed } = result;
    remote.forEach((index, j) => {
      const check = checks[index]!;
      const state = this.touch(check.key, states[j]!);
      const answer = result.decisions[j]!;
      const extra = result.extras[j] ?? 0;
      const interval = emissionIntervalMs(check.limit);
      const leftover = state.leaseMs;
      state.rate = check.limit.rate;
      state.burst = check.limit.burst;
      // Redis' bucket includes this instance's leftover lease; the view excludes it.
      state.shadowTat = now + answer.resetMs - leftover;
      const exact = leftover === 0;
      if (allowed) {
        if (extra > 0) {
          state.leaseMs = leftover + extra * interval;
          state.leaseExpiresAt = this.clock.now() + this.leaseTtlMs;
          this.leased.add(check.key);
          this.leaseCount++;
          this.leasedTokenCount += extra;
          this.startLeaseTimer();
        }
        const wanted = Math.min(state.target, check.limit.burst - check.cost);
        if (state.target >= HOT_LEASE && extra < wanted) {
          // The bucket ran dry: calling again before a whole lease has
          // refilled would fetch a token or two per call.
          state.contention = Math.min(MAX_CONTENTION, state.contention * 2);
          const left = Math.max(0, answer.remaining - extra);
          state.denyUntil = now + Math.max(0, this.holdTokens(state, check) - left) * interval;
          state.denyCost = check.cost;
        } else {
          if (extra > 0) state.contention = Math.max(1, state.contention * CONTENTION_DECAY);
          state.denyUntil = Number.NEGATIVE_INFINITY;
        }
        decisions[index] = exact ? answer : { ...gcraPeek(state.shadowTat, now, check.limit), allowed: true };
        return;
      }
      if (!answer.allowed && Number.isFinite(answer.retryAfterMs)) {
        let waitMs = answer.retryAfterMs;
        // Hot key: wait for a whole lease, not the first token (see the class comment).
        if (state.target >= HOT_LEASE) {
          state.contention = Math.min(MAX_CONTENTION, state.contention * 2);
          waitMs += Math.max(0, this.holdTokens(state, check) - check.cost) * interval;
        }
        state.denyUntil = now + waitMs;
        state.denyCost = check.cost;
        decisions[index] = waitMs === answer.retryAfterMs ? answer : { ...answer, retryAfterMs: waitMs };
        return;
      }
      decisions[index] = exact ? answer : { ...gcraPeek(state.shadowTat, now, check.limit), allowed: answer.allowed };
    });
    if (allowed) {
      for (const reservation of reservations) decisions[reservation.index] = reservation.outcome.decision;
    } else {
      for (let r = reservations.length - 1; r >= 0; r--) {
        const reservation = reservations[r]!;
        this.unreserve(reservation);
        decisions[reservation.index] = gcraPeek(reservation.state.shadowTat, now, checks[reservation.index]!.limit);
      }
    }
    return { allowed, decisions };
  }

  /** Redis is failing: the local fallback decides for the checks lacking a lease. */
  private decideLocally(request: ConsumeRequest, now: number, states: KeyState[], remote: number[], leased: number[]): ConsumeResult {
    const { checks } = request;
    this.localCount++;
    this.fallbackDecisionCount++;
    const answer = this.fallback.consume({ checks: remote.map((i) => this.scaled(checks[i]!)), now: request.now });
    const decisions: RateLimitDecision[] = new Array(checks.length);
    remote.forEach((index, j) => (decisions[index] = answer.decisions[j]!));
    for (const index of leased) {
      const check = checks[index]!;
      const state = states[index]!;
      decisions[index] = answer.allowed ? this.spend(check, state, now).decision : gcraPeek(state.shadowTat, now, check.limit);
    }
    return { allowed: answer.allowed, decisions };
  }

  /** What a locally denied request reports for `check`: charged nothing. */
  private localDecision(check: RateLimitCheck, state: KeyState, now: number): RateLimitDecision {
    const outcome = gcraConsume(state.shadowTat, now, check.limit, check.cost);
    if (check.cost > check.limit.burst + TOKEN_EPSILON) return outcome.decision;
    if (this.leaseCovers(check, state)) return outcome.decision.allowed ? gcraPeek(state.shadowTat, now, check.limit) : outcome.decision;
    if (this.denyActive(check, state, now)) {
      const view = gcraPeek(state.shadowTat, now, check.limit);
      return {
        allowed: false,
        remaining: view.remaining,
        retryAfterMs: this.denyWaitMs(check, state, now),
        resetMs: view.resetMs,
        reason: 'limit',
      };
    }
    // Not asked of Redis: this instance's view of it.
    return outcome.decision.allowed ? gcraPeek(state.shadowTat, now, check.limit) : outcome.decision;
  }

  // ------------------------------------------------------------- local state

  /** The key's state, created (and the oldest evicted past `maxKeys`) when missing. */
  private stateOf(check: RateLimitCheck, now: number): KeyState {
    let state = this.states.get(check.key);
    if (state === undefined) {
      if (this.states.size >= this.maxKeys) this.evictOldest();
      state = {
        rate: check.limit.rate,
        burst: check.limit.burst,
        score: 0,
        seenAt: now,
        firstSeen: now,
        target: 0,
        shadowTat: undefined,
        leaseMs: 0,
        leaseExpiresAt: 0,
        denyUntil: Number.NEGATIVE_INFINITY,
        denyCost: 0,
        contention: 1,
        pending: undefined,
      };
      this.insert(check.key, state);
    }
    return state;
  }

  /**
   * Records demand, and sizes the next lease from the demand seen before
   * this request: the decayed count over the time constant, or over the
   * key's age while it is younger (a key that just turned hot is hot now,
   * not in a second), never over less than {@link MIN_DEMAND_AGE} of it.
   */
  private observe(check: RateLimitCheck, now: number): void {
    const state = this.stateOf(check, now);
    const elapsed = now - state.seenAt;
    const prior = elapsed > 0 ? state.score * Math.exp(-elapsed / this.leaseTtlMs) : state.score;
    const cap = Math.floor(this.maxLeaseShare * check.limit.burst + TOKEN_EPSILON);
    const windowMs = Math.max(MIN_DEMAND_AGE * this.leaseTtlMs, Math.min(this.leaseTtlMs, now - state.firstSeen));
    const demand = prior >= MIN_DEMAND ? (prior * this.leaseTtlMs) / windowMs : 0;
    state.target = Math.max(0, Math.min(cap, Math.floor(demand * LEASE_DEMAND_SHARE)));
    state.score = prior + check.cost;
    if (elapsed > 0) state.seenAt = now;
  }

  /** True when the key's live lease holds `check.cost` tokens (an expired lease is given back first). */
  private leaseCovers(check: RateLimitCheck, state: KeyState): boolean {
    if (state.leaseMs <= 0) return false;
    if (this.clock.now() >= state.leaseExpiresAt) {
      this.returnLease(check.key, state);
      return false;
    }
    const need = check.cost * emissionIntervalMs(check.limit);
    return state.leaseMs + TOKEN_EPSILON * need >= need;
  }

  private denyActive(check: RateLimitCheck, state: KeyState, now: number): boolean {
    return (
      state.denyUntil > now &&
      check.cost >= state.denyCost &&
      check.limit.rate === state.rate &&
      check.limit.burst === state.burst
    );
  }

  /**
   * Tokens a hot key waits for, after a shortfall, before its next Redis
   * call: the request and a whole lease, times the contention seen (other
   * instances draining the same bucket), never more than half the burst so
   * that the bucket cannot fill up and waste tokens meanwhile.
   */
  private holdTokens(state: KeyState, check: RateLimitCheck): number {
    const batch = check.cost + Math.min(state.target, check.limit.burst - check.cost);
    return Math.min(batch * state.contention, Math.max(batch, check.limit.burst * MAX_HOLD_SHARE));
  }

  /** Time until a deny-cached request may be asked of Redis again (a dearer one waits its extra tokens too). */
  private denyWaitMs(check: RateLimitCheck, state: KeyState, now: number): number {
    return state.denyUntil - now + (check.cost - state.denyCost) * emissionIntervalMs(check.limit);
  }

  /** Spends `check.cost` from the key's lease (the caller checked that it covers it). */
  private spend(check: RateLimitCheck, state: KeyState, now: number): { tat: number; decision: RateLimitDecision } {
    const outcome = gcraConsume(state.shadowTat, now, check.limit, check.cost);
    state.shadowTat = outcome.tat;
    state.leaseMs = Math.max(0, state.leaseMs - check.cost * emissionIntervalMs(check.limit));
    if (state.leaseMs <= TOKEN_EPSILON * emissionIntervalMs(check.limit)) {
      state.leaseMs = 0;
      this.leased.delete(check.key);
    }
    return outcome;
  }

  private reserve(index: number, check: RateLimitCheck, state: KeyState, now: number): Reservation {
    const previous = state.shadowTat;
    const current = previous === undefined || previous < now ? now : previous;
    const leaseMs = state.leaseMs;
    const outcome = this.spend(check, state, now);
    return { index, key: check.key, state, outcome, previous, chargedMs: outcome.tat - current, leaseMs: leaseMs - state.leaseMs };
  }

  /** Puts a reservation back (the request was denied, or Redis failed). */
  private unreserve(reservation: Reservation): void {
    const { state } = reservation;
    // Untouched since: restore exactly; else take back only this charge.
    state.shadowTat = state.shadowTat === reservation.outcome.tat ? reservation.previous : state.shadowTat! - reservation.chargedMs;
    state.leaseMs += reservation.leaseMs;
    if (state.leaseMs > 0 && this.states.get(reservation.key) === state) this.leased.add(reservation.key);
  }

  /** Moves a key to the most recently used end (re-inserting it if it was evicted meanwhile). */
  private touch(key: string, state: KeyState): KeyState {
    const current = this.states.get(key);
    if (current !== undefined && current !== state) return current;
    this.states.delete(key);
    if (this.states.size >= this.maxKeys) this.evictOldest();
    this.insert(key, state);
    return state;
  }

  /** Every insertion goes through here: the cursors must hear of it (see MapCursor). */
  private insert(key: string, state: KeyState): void {
    this.states.set(key, state);
    this.sweepCursor.inserted();
    this.evictionCursor.inserted();
  }

  private evictOldest(): void {
    // At the end of a pass, the next step starts over from the oldest entry.
    const key = this.evictionCursor.next() ?? this.evictionCursor.next();
    if (key === undefined) return;
    const state = this.states.get(key);
    if (state && state.leaseMs > 0) this.returnLease(key, state);
    this.states.delete(key);
    this.leased.delete(key);
  }

  /**
   * A couple of entries per decision: drops keys with nothing worth keeping
   * (no lease, no live denial, no call in flight, bucket full again, unseen
   * for `leaseTtlMs`) and gives back expired leases.
   */
  private sweep(now: number): void {
    for (let examined = 0; examined < SWEEP_STEP; examined++) {
      const key = this.sweepCursor.next();
      if (key === undefined) return;
      const state = this.states.get(key)!;
      if (state.leaseMs > 0) {
        if (this.clock.now() >= state.leaseExpiresAt) this.returnLease(key, state);
        else continue;
      }
      // A bucket not yet full again is still worth its view (what local denials report).
      if (state.pending !== undefined || state.denyUntil > now || (state.shadowTat !== undefined && state.shadowTat > now)) continue;
      // Unseen for a whole demand window: it would start over as a cold key.
      if (now - state.seenAt >= this.leaseTtlMs) this.states.delete(key);
    }
  }

  // ------------------------------------------------------------------ leases

  /** Queues the key's unspent lease for giving back (sent at the next flush). */
  private returnLease(key: string, state: KeyState): void {
    const tokens = (state.leaseMs * state.rate) / 1000;
    state.leaseMs = 0;
    this.leased.delete(key);
    if (!(tokens > TOKEN_EPSILON)) return;
    if (this.degradedNow) {
      this.lostTokenCount += tokens;
      return;
    }
    this.returns.push({ key, limit: { algorithm: 'token-bucket', rate: state.rate, burst: state.burst }, tokens });
    if (!this.returnsScheduled) {
      this.returnsScheduled = true;
      queueMicrotask(() => this.flushReturns());
    }
  }

  /** Sends the queued give-backs (batched). Never rejects: failures are counted. */
  private flushReturns(): void {
    this.returnsScheduled = false;
    if (this.returns.length === 0) return;
    const queued = this.returns;
    this.returns = [];
    const now = this.lastNow;
    for (let start = 0; start < queued.length; start += RETURN_BATCH) {
      const batch = queued.slice(start, start + RETURN_BATCH);
      this.redisCallCount++;
      const sent = this.redis
        .refund({ checks: batch.map(({ key, limit, tokens }) => ({ key, limit, cost: tokens })), now })
        .then(
          () => {
            this.returnCount += batch.length;
            for (const item of batch) this.returnedTokenCount += item.tokens;
          },
          () => {
            for (const item of batch) this.lostTokenCount += item.tokens;
          },
        )
        .finally(() => this.inFlightReturns.delete(sent));
      this.inFlightReturns.add(sent);
    }
  }

  private startLeaseTimer(): void {
    if (this.leaseTimer !== undefined || this.closed) return;
    this.leaseTimer = setInterval(() => this.expireLeases(), Math.max(10, this.leaseTtlMs / 2));
    this.leaseTimer.unref();
  }

  private stopLeaseTimer(): void {
    if (this.leaseTimer === undefined) return;
    clearInterval(this.leaseTimer);
    this.leaseTimer = undefined;
  }

  /** Timer: gives back leases of keys no request touched since they expired. */
  private expireLeases(): void {
    const clockNow = this.clock.now();
    for (const key of this.leased) {
      const state = this.states.get(key);
      if (state === undefined || state.leaseMs <= 0) this.leased.delete(key);
      else if (clockNow >= state.leaseExpiresAt) this.returnLease(key, state);
    }
    this.flushReturns();
    if (this.leased.size === 0) this.stopLeaseTimer();
  }

  // ----------------------------------------------------------------- failure

  private degrade(): void {
    if (this.degradedNow || this.closed) return;
    this.degradedNow = true;
    this.fallbackCount++;
    // Give-backs queued for a Redis that does not answer would be lost anyway.
    for (const item of this.returns) this.lostTokenCount += item.tokens;
    this.returns = [];
    this.probeTimer = setInterval(() => this.probe(), this.probeIntervalMs);
    this.probeTimer.unref();
  }

  private probe(): void {
    if (this.probing || this.closed || !this.degradedNow) return;
    this.probing = true;
    this.redisCallCount++;
    this.redis.peek({ checks: [{ key: PROBE_KEY, limit: PROBE_LIMIT }], now: this.lastNow }).then(
      () => {
        this.probing = false;
        this.recover();
      },
      () => {
        this.probing = false;
      },
    );
  }

  private recover(): void {
    if (!this.degradedNow) return;
    this.degradedNow = false;
    this.recoveryCount++;
    this.stopProbing();
    // The fallback's buckets described a share of the limit: Redis is the truth again.
    this.fallback.close();
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

  private relative(now: number): number {
    this.lastNow = now;
    if (this.epoch === undefined) this.epoch = now;
    return now - this.epoch;
  }
}

function noop(): void {}

function positive(name: string, value: number | undefined, fallback: number): number {
  const result = value ?? fallback;
  if (typeof result !== 'number' || !Number.isFinite(result) || result <= 0 || result > 2_147_483_647) {
    throw new TypeError(`TwoTierStore: ${name} must be a positive number of milliseconds, got ${String(value)}`);
  }
  return result;
}
