import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import type { ConcurrencySlots } from './concurrency-slots.interface.js';
import type { MaybePromise } from '../util/maybe-promise.js';

/**
 * Store contract, version 2.
 *
 * A store keeps buckets and answers for several of them at once; it knows
 * nothing of routes, transports or module policies (fail mode, shadow, skip
 * live in the module). Requests and results are objects, so a field added
 * later breaks no adapter.
 *
 * Changes from version 1 (0.1.x):
 * - a check carries its bucket as `limit: { algorithm, rate, burst }` instead
 *   of flat `rate`/`burst`: every check says which algorithm it belongs to,
 *   and the module puts the same tag in the bucket key, so a limit moved to
 *   another algorithm never reads a bucket written by the old one;
 * - `refund` is part of the contract (it was `RedisStore.giveBack`);
 * - `ConsumeRequest.failMode` is gone: the module applies its fail mode, and
 *   a store that can decide locally says so with {@link RateLimitStore.localFallback}.
 */

/** Names of the algorithms a check may belong to. */
export type AlgorithmName = 'token-bucket' | 'fixed-window' | 'sliding-window';

/** A token bucket: `rate` tokens per second refill a bucket of `burst` tokens. */
export interface TokenBucketLimit {
  readonly algorithm: 'token-bucket';
  /** Refill rate in tokens per second (> 0). */
  readonly rate: number;
  /** Bucket capacity in tokens (>= 1). */
  readonly burst: number;
}

/**
 * Calendar alignment of a fixed window: windows start at midnight (`'day'`)
 * or on the first of the month (`'month'`) in `timeZone`, so they last 23,
 * 24 or 25 hours (daylight saving) or 28 to 31 days. `windowMs` is then the
 * nominal length (a day, 30 days), used for headers only.
 */
export interface CalendarAlignment {
  readonly unit: 'day' | 'month';
  /** An IANA time zone name (`'Europe/Paris'`), validated at start-up. */
  readonly timeZone: string;
}

/**
 * A fixed window: at most `quota` per window; windows are aligned on
 * multiples of `windowMs` since the Unix epoch, or on calendar boundaries
 * when `calendar` is set.
 */
export interface FixedWindowLimit {
  readonly algorithm: 'fixed-window';
  /** The most a window admits (>= 1). */
  readonly quota: number;
  /** Window length in whole milliseconds (>= 1); nominal when `calendar` is set. */
  readonly windowMs: number;
  readonly calendar?: CalendarAlignment;
  /**
   * `'first-hit'`: a window starts at the first request admitted after the
   * last one ended (not on an epoch multiple), as `@nestjs/throttler` counts;
   * such a window may be blocked (`block`) past its end. Not with `calendar`.
   * Memory, Redis (`block-window.lua`) and two-tier (passed to Redis) stores
   * know it; the window store contract checks it (`anchored-window-contract.ts`).
   */
  readonly anchor?: 'first-hit';
}

/**
 * A sliding window (weighted two-window counter): the previous window's
 * count, weighted by how much of it still overlaps the last `windowMs`, plus
 * the current window's count, at most `quota`.
 */
export interface SlidingWindowLimit {
  readonly algorithm: 'sliding-window';
  /** The most admitted in (an estimate of) any `windowMs` (>= 1). */
  readonly quota: number;
  /** Window length in whole milliseconds (>= 1). */
  readonly windowMs: number;
}

/** A window limit, fixed or sliding. */
export type WindowLimit = FixedWindowLimit | SlidingWindowLimit;

/** The bucket shape of a check: one member per algorithm. */
export type StoreLimit = TokenBucketLimit | WindowLimit;

/** True for the window algorithms (no tokens, no refill rate). */
export function isWindowLimit(limit: StoreLimit): limit is WindowLimit {
  return limit.algorithm !== 'token-bucket';
}

/** What a request of this limit can take at most: the burst, or the window's quota. */
export function capacityOf(limit: StoreLimit): number {
  return limit.algorithm === 'token-bucket' ? limit.burst : limit.quota;
}

/** One bucket, as `peek` and `reset` are asked about it. */
export interface BucketRef {
  /**
   * Fully namespaced bucket key (algorithm tag, limit name, route and caller
   * already folded in, length bounded): see `bucketNamespace`.
   */
  readonly key: string;
  /**
   * The key in its two parts, `namespace + identity === key` (see
   * `bucketNamespace`), which the module gives with every check. An
   * in-process store may index by them instead of hashing the whole key on
   * every call (`MemoryStore` does); others ignore them. A store must decide
   * the same with or without them.
   */
  readonly namespace?: string;
  readonly identity?: string;
  /** The bucket's shape, read on every decision (adaptive limits change it). */
  readonly limit: StoreLimit;
}

/** One bucket to charge within a {@link ConsumeRequest} (or credit, in a {@link RefundRequest}). */
export interface RateLimitCheck extends BucketRef {
  /** Tokens this request takes from the bucket (> 0); for a refund, the tokens given back. */
  readonly cost: number;
}

/** A check of a token bucket (what leases, GCRA-only paths take). */
export interface TokenBucketCheck extends RateLimitCheck {
  readonly limit: TokenBucketLimit;
}

/** True when every check is a token bucket's. */
export function allTokenBuckets<T extends BucketRef>(
  checks: readonly T[],
): checks is readonly (T & { readonly limit: TokenBucketLimit })[] {
  for (const check of checks) if (check.limit.algorithm !== 'token-bucket') return false;
  return true;
}

/** What {@link RateLimitStore.consume} is asked. */
export interface ConsumeRequest {
  /** Every bucket the request must pass; admitted only if all admit. */
  readonly checks: readonly RateLimitCheck[];
  /**
   * The module clock's time in milliseconds. Stores that keep their own time
   * (Redis server time) may ignore it.
   */
  readonly now: number;
}

/** A request whose checks are all token buckets'. */
export interface TokenBucketRequest extends ConsumeRequest {
  readonly checks: readonly TokenBucketCheck[];
}

/** What {@link RateLimitStore.consume}, `peek` and `refund` answer. */
export interface ConsumeResult {
  /** True when every check admitted and every bucket was charged. */
  readonly allowed: boolean;
  /**
   * One decision per check, in request order. When the request is denied,
   * nothing was charged: admitting checks report their bucket as it is.
   */
  readonly decisions: readonly RateLimitDecision[];
}

/** What {@link RateLimitStore.peek} and {@link RateLimitStore.reset} are asked. */
export interface BucketsRequest {
  readonly checks: readonly BucketRef[];
  readonly now: number;
}

/**
 * What {@link RateLimitStore.refund} is asked: give each check's `cost`
 * tokens back to its bucket (never fuller than full).
 */
export type RefundRequest = ConsumeRequest;

/**
 * One token bucket to settle, in a {@link SettleRequest}: the difference
 * between what a reservation charged at admission and what was spent.
 */
export interface SettleCheck extends BucketRef {
  readonly limit: TokenBucketLimit;
  /**
   * Tokens to charge (> 0), even past empty: the bucket goes into debt and
   * admits nothing until it is repaid at the rate; or to give back (< 0),
   * never making the bucket fuller than full (as {@link RateLimitStore.refund}).
   */
  readonly delta: number;
}

/** What {@link RateLimitStore.settle} is asked. */
export interface SettleRequest {
  readonly checks: readonly SettleCheck[];
  /** Milliseconds, from the module's clock. */
  readonly now: number;
}

/** One bucket to block (a penalty), in a {@link BlockRequest}. */
export interface BlockCheck extends BucketRef {
  /** How long the bucket stays empty from `now` (> 0 ms). */
  readonly durationMs: number;
}

/** What {@link RateLimitStore.block} is asked. */
export interface BlockRequest {
  readonly checks: readonly BlockCheck[];
  /** Milliseconds, from the module's clock. */
  readonly now: number;
  /**
   * A penalty for a denial (`blockDuration`): a bucket still serving a block
   * is left as it is, so that a retry near the end of a block is not taken
   * for a new abuse and does not start the block over. "Serving a block":
   * the bucket holds the state a block wrote (nothing changed it since: no
   * reset, refund or admission) and that block has not ended. Stores keep
   * that mark beside the bucket. Without this flag (`RateLimiter.block`, an
   * operator's ban) a block always applies and only extends.
   */
  readonly unlessBlocked?: boolean;
}

/** A value, or a promise of it (declared in `lib/util/`): stores that can answer synchronously should. */
export type { MaybePromise };

/**
 * The capability behind `failMode: 'local'`: a store with a local tier that
 * can keep deciding from a share of each limit while its shared backend
 * fails (`TwoTierStore`). The module, not the store, decides when to use it.
 */
export interface LocalFallback {
  /**
   * True while the shared backend is known to be failing: the module then
   * sends `'local'` requests straight to {@link consumeLocally} instead of
   * waiting for the backend to fail again.
   */
  readonly active: boolean;
  /**
   * Decide without the shared backend (and keep doing so, and probe it, until
   * it answers again). Synchronous: nothing remote is asked.
   */
  consumeLocally(request: ConsumeRequest): ConsumeResult;
  /**
   * Be told when {@link active} changes (`true`: the fallback took over,
   * `false`: the backend is back), for the module's fallback events.
   * Optional; returns a function that stops the telling.
   */
  watch?(listener: (active: boolean) => void): () => void;
}

/**
 * What {@link RateLimitStore.health} answers: whether the store can decide.
 * - `'up'`: its backend answers (or it has none: memory).
 * - `'degraded'`: its backend does not, but it decides all the same (a
 *   local fallback is active): limits hold, at their local share.
 * - `'down'`: its backend does not answer and nothing decides in its place:
 *   requests are resolved by the fail mode.
 */
export interface StoreHealth {
  readonly status: 'up' | 'degraded' | 'down';
  /** `memory`, `redis`, `two-tier`, or what a custom store calls itself. */
  readonly store: string;
  /** The backend's round trip (a PING), milliseconds, when it answered. */
  readonly latencyMs?: number;
  /** Why it is not up (an error message; never a connection string). */
  readonly error?: string;
}

/**
 * What {@link RateLimitStore.stats} answers: counters since the store
 * started, read when metrics are collected. Those of a store with a local
 * tier in front of a shared backend (`TwoTierStore`, whose `stats()` answers
 * more); a store of kind `'two-tier'` has them exported as the
 * `rate_limiting.two_tier.*` instruments.
 */
export interface RateLimitStoreStats {
  /** `consume` calls answered without waiting for the shared backend (lease, deny cache, fallback). */
  readonly localDecisions: number;
  /** Calls made to the shared backend (Redis): decisions with or without lease, give-backs, peeks, resets, probes. */
  readonly redisCalls: number;
  /** Shared-backend answers that granted extra tokens (a lease). */
  readonly leasesTaken: number;
  /** Requests denied by the local deny cache, without asking the shared backend. */
  readonly denyCacheHits: number;
}

/** What {@link RateLimitStore.health} is asked. */
export interface HealthRequest {
  /** The longest to wait for the backend, milliseconds. */
  readonly timeoutMs: number;
}

/**
 * The contract every store implements (memory, Redis, two-tier, your own).
 *
 * Implementations must be all-or-nothing across the checks of one
 * {@link ConsumeRequest}: if any check denies, no bucket is charged. A store
 * that fails throws (or rejects) a `RateLimitStoreError` and the module
 * resolves the failure with its `failMode`; being over the limit is a normal
 * result, never an error.
 *
 * @publicApi
 */
export interface RateLimitStore {
  /**
   * What kind of store this is: the `store` attribute of metrics, and what
   * the health indicator reports for a store without `health()`. The stores
   * the library ships say `'memory'`, `'redis'` and `'two-tier'`. A metric
   * attribute: one fixed value per store class, never a connection string or
   * a key prefix. Optional: a store without one is `'custom'`.
   */
  readonly kind?: string;
  /**
   * Present when the store can decide locally while its shared backend
   * fails, as `failMode: 'local'` asks. The module refuses `failMode: 'local'`
   * at start-up with a store that has none.
   */
  readonly localFallback?: LocalFallback;
  /** Charge every check's bucket, or none of them. */
  consume(request: ConsumeRequest): MaybePromise<ConsumeResult>;
  /** Report each bucket as it is now, without charging it. */
  peek(request: BucketsRequest): MaybePromise<ConsumeResult>;
  /**
   * Give tokens back: each check's bucket regains `cost` tokens, never past
   * full (tokens the bucket would have regained by now are not added twice).
   * Answers each bucket as it is afterwards, like {@link peek}.
   */
  refund(request: RefundRequest): MaybePromise<ConsumeResult>;
  /** Forget the buckets: they are full again. */
  reset(request: BucketsRequest): MaybePromise<void>;
  /**
   * Block each bucket for its `durationMs` (a penalty): empty until then, one
   * token back at its end, refilling at the rate afterwards; a bucket already
   * blocked longer stays so. Answers each bucket afterwards, like {@link peek}.
   * With `unlessBlocked`, a bucket still serving a block is left alone (see
   * {@link BlockRequest.unlessBlocked}); a store that ignores the flag blocks
   * again, so a client retrying near a block's end is blocked anew.
   * Optional: the module refuses `blockDuration` at start-up with a store
   * that has none.
   */
  block?(request: BlockRequest): MaybePromise<ConsumeResult>;
  /**
   * Settle reservations (`settle` on a limit, `RateLimiter.reserve`): each
   * bucket is charged its `delta` (past empty: debt) or given `-delta` back
   * (never past full), atomically per bucket (`gcraSettle`), never denied.
   * Answers each bucket afterwards, like {@link peek} (a bucket in debt
   * answers `allowed: false` with the wait until it is empty again).
   * Optional: the module refuses `settle` at start-up, and
   * `RateLimiter.reserve` throws, with a store that has none.
   */
  settle?(request: SettleRequest): MaybePromise<ConsumeResult>;
  /**
   * Slots for `concurrency` limits (see `concurrency-slots.interface.ts`).
   * Optional: the module refuses a `concurrency` limit at start-up with a
   * store that has none.
   */
  readonly slots?: ConcurrencySlots;
  /** Release resources (timers, connections the store owns). Idempotent. */
  close(): MaybePromise<void>;
  /**
   * Whether the store can decide now, for health checks (`nestjs-holdup/terminus`).
   * Must answer within `timeoutMs` and never reject. Optional: a store
   * without it is reported up.
   */
  health?(request: HealthRequest): Promise<StoreHealth>;
  /**
   * The store's counters, read when metrics are collected (see
   * {@link RateLimitStoreStats}). Optional: only a store with a local tier
   * (`TwoTierStore`) has them.
   */
  stats?(): RateLimitStoreStats;
}
