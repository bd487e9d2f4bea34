import { describeValue } from '../../lib/errors/option-error.js';
import { isWindowLimit } from '../../lib/store/rate-limit-store.interface.js';
import type {
  BlockRequest,
  BucketRef,
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  HealthRequest,
  RateLimitCheck,
  RateLimitStore,
  RefundRequest,
  SettleRequest,
  StoreHealth,
} from '../../lib/store/rate-limit-store.interface.js';
import { chargeAcrossSlots, eachSlot } from './cross-slot.js';
import { GuardedCalls } from './guarded-call.js';
import type { LeaseRequest, LeaseResult, PaceAsk } from './lease.interface.js';
import type { RedisClient } from './redis-client.interface.js';
import { redisKey } from './redis-keys.js';
import { resolveRedisStoreOptions, type RedisStoreOptions } from './redis-store-options.js';
import { toConsumeResult, toLeaseResult, type ScriptAnswer } from './script-reply.js';
import {
  CONSUME,
  LEASE,
  PEEK,
  REFUND,
  SETTLE,
  ScriptRunner,
  type Bucket,
  type FleetMember,
  type Operation,
} from './script-runner.js';
import { groupBySlot, pick } from './slot-groups.js';
import { RedisSlots } from './redis-slots.js';
import { blockBuckets } from './redis-blocks.js';
import { windowSpec } from './window-spec.js';

export { DEFAULT_REDIS_TIMEOUT_MS, type RedisStoreOptions } from './redis-store-options.js';
export type { LeaseCheck, LeaseRequest, LeaseResult } from './lease.interface.js';

/**
 * Redis store: GCRA and the window algorithms in Lua, one script per
 * operation (`scripts/`), one round trip per decision; checks of different
 * algorithms in one request go in the same script call, all or nothing.
 * Window limits cannot be leased; of windows, only those anchored at their
 * first hit (`anchor: 'first-hit'`) can be blocked (others refused at start-up).
 *
 * - Scripts are called by SHA (`EVALSHA`); after a Redis restart, failover
 *   or `SCRIPT FLUSH` the `NOSCRIPT` reply is answered with one `EVAL`, which
 *   also caches the script again. Never `KEYS`/`SCAN`, never a per-request
 *   `SCRIPT LOAD`.
 * - Each bucket is one string key holding its theoretical arrival time, which
 *   expires exactly when the bucket is full again: no sweeping, no stale keys.
 *   The scripts compute in the frame of `floor(now)` and store the time as
 *   an integer base plus an offset, so their precision does not depend on the
 *   epoch (at `Date.now()` magnitudes doubles are too coarse for high rates).
 * - Failure is bounded: a decision rejects with `RateLimitStoreError` when
 *   Redis does not answer within `timeoutMs`, answers an error, or the client
 *   is not connected (checked before sending, so nothing waits in an offline
 *   queue). Late replies are swallowed, the timeout timer (one per store) is
 *   `unref()`'d, and the store recovers by itself when the client reconnects.
 * - With ioredis' standalone client, the script calls of concurrent requests
 *   made in the same tick leave in one socket write (`script-sender.ts`),
 *   whether or not the client auto-pipelines.
 *
 * All-or-nothing across the checks of one request:
 * - Standalone Redis: all checks run in one script call, atomically.
 * - Redis Cluster: a bucket lives in one slot (its key is hash-tagged), so each
 *   bucket's decision is atomic. Checks of one request that fall in different
 *   slots are consumed slot by slot in ascending slot order, each slot in one
 *   atomic script call (an admitted request costs one round trip per slot).
 *   When a slot denies, what the earlier slots took is given back before the
 *   promise settles (their previous state is restored exactly when nobody
 *   charged them since, otherwise TAT -= cost x interval, never below now),
 *   and the later slots are only evaluated, not charged. So: no bucket ever
 *   admits beyond its rate and burst; a denied request ends up charging
 *   nothing, as long as the refund reaches Redis; for the duration of that one
 *   extra round trip the earlier buckets look charged, so concurrent requests
 *   may be denied by them (errors only ever lean towards denying); and since
 *   every request visits slots in the same order, two requests cannot deny
 *   each other through each other's transient charges. If Redis fails or the
 *   deadline passes mid-way, the refund still runs in the background; if it
 *   cannot reach Redis, those buckets stay charged by that request's cost
 *   until they refill (counted in {@link RedisStore.refundFailures}).
 *   (`cross-slot.ts`.)
 *
 * @publicApi
 */
export class RedisStore implements RateLimitStore {
  /** The `store` attribute of metrics. */
  readonly kind = 'redis';
  private readonly client: RedisClient;
  private readonly keyPrefix: string;
  private readonly cluster: boolean;
  private readonly guard: GuardedCalls;
  private readonly scripts: ScriptRunner;
  private refundFailureCount = 0;
  /** Longest wait for an answer from Redis, in milliseconds (the `timeoutMs` option). */
  readonly timeoutMs: number;
  /** Slots of `concurrency` limits: a sorted set per key, leases on Redis server time (`redis-slots.ts`). */
  readonly slots: RedisSlots;
  /** True when the scripts work in each request's own `now` (`time: 'client'`), else in Redis `TIME`. */
  readonly clientTime: boolean;

  constructor(options: RedisStoreOptions) {
    const resolved = resolveRedisStoreOptions(options);
    this.client = resolved.client;
    this.keyPrefix = resolved.keyPrefix;
    this.cluster = resolved.cluster;
    this.timeoutMs = resolved.timeoutMs;
    this.clientTime = resolved.clientTime;
    this.guard = new GuardedCalls(resolved.client, resolved.timeoutMs);
    this.scripts = new ScriptRunner(resolved.client, resolved.clientTime, resolved.paddingArg);
    this.slots = new RedisSlots(resolved.client, resolved.keyPrefix, this.guard);
  }

  /** Calls asked of Redis (consume, lease, refund, peek, reset) since start. */
  get calls(): number {
    return this.guard.calls;
  }

  /** Calls rejected because Redis did not answer within `timeoutMs`. */
  get timeouts(): number {
    return this.guard.timeouts;
  }

  /** Calls rejected for any other reason: client not connected, Redis error reply, store closed. */
  get errors(): number {
    return this.guard.errors;
  }

  /** `NOSCRIPT` replies answered by re-sending the script (after a restart, failover or `SCRIPT FLUSH`). */
  get scriptReloads(): number {
    return this.scripts.reloads;
  }

  /** Cluster only: refunds of a request denied by a later slot that could not reach Redis. */
  get refundFailures(): number {
    return this.refundFailureCount;
  }

  consume(request: ConsumeRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [] });
    return this.guard.run('consume', () =>
      this.charge('consume', this.buckets(checks, now), now).then(toConsumeResult),
    );
  }

  /**
   * A consume that also takes a lease: all checks are charged their cost or
   * none is (exactly as {@link consume}, same decisions), and when the
   * request is admitted each check's bucket additionally gives up to
   * `maxExtra` whole tokens, as many as it holds after the cost, in the same
   * atomic script call. The caller owns those tokens: spend them locally, and
   * hand back what is left with {@link refund}. Used by `TwoTierStore`.
   *
   * Same failure rules as {@link consume} (timeout, fail-fast, Cluster slot
   * by slot, where a slot that denies gives back the cost and extras the
   * earlier slots took). `timeoutMs`, at most the store's, shortens this
   * call's deadline (what is left of the caller's own).
   */
  lease(request: LeaseRequest, timeoutMs = this.timeoutMs): Promise<LeaseResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [], extras: [] });
    return this.guard.run(
      'lease',
      () => {
        const buckets = checks.map((check) => {
          const maxExtra = Math.floor(check.maxExtra);
          if (!(maxExtra >= 0))
            throw new TypeError(
              `RedisStore: lease maxExtra must be a number >= 0, got ${describeValue(check.maxExtra)}`,
            );
          const { limit } = check;
          if (isWindowLimit(limit))
            throw new TypeError(
              `RedisStore: a ${limit.algorithm} limit cannot be leased (windows have no tokens to lend)`,
            );
          return {
            redisKey: redisKey(this.keyPrefix, check.key),
            rate: limit.rate,
            burst: limit.burst,
            cost: check.cost,
            maxExtra,
            joinExtra: Math.max(0, Math.floor(check.joinExtra ?? 0)) || 0,
            joinCounts: check.joinCounts,
            epoch: check.epoch,
            weight: Number.isFinite(check.weight) ? Math.max(0, check.weight!) : 0,
            pace: paceArg(check.pace),
          };
        });
        return this.charge('lease', buckets, now, request.fleet).then(toLeaseResult);
      },
      Math.min(timeoutMs, this.timeoutMs),
    );
  }

  /**
   * Gives back tokens taken earlier (the unspent part of a lease): each
   * check's bucket gets `cost` tokens back, `TAT -= cost x interval`, never
   * past "full now" (tokens the bucket would have regained by now anyway are
   * not added twice). A missing key is a full bucket and stays so. Answers
   * each bucket as it is afterwards, like {@link peek}.
   */
  refund(request: RefundRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [] });
    return this.guard.run('refund', () => this.perSlot(REFUND, this.buckets(checks, now), now));
  }

  /**
   * Settles reservations (`settle.lua`): each bucket charged its delta (past
   * empty: debt) or given it back (never past full), one script call per
   * Cluster slot (one in all when the keys share a hash tag, as a request's
   * keys do). A settlement is never denied, so there is nothing to undo
   * across slots: each slot's part is atomic on its own.
   */
  settle(request: SettleRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [] });
    return this.guard.run('settle', () => {
      const buckets = checks.map(({ key, limit, delta }) => {
        // Refused at start-up (policies/settle.ts): a window has no refill to repay a debt with.
        const algorithm: string = limit.algorithm;
        if (algorithm !== 'token-bucket')
          throw new TypeError(`RedisStore: settle is not supported for ${algorithm} limits`);
        return {
          redisKey: redisKey(this.keyPrefix, key),
          rate: limit.rate,
          burst: limit.burst,
          cost: delta,
        };
      });
      return this.perSlot(SETTLE, buckets, now);
    });
  }

  /**
   * Blocks each bucket for its duration: token buckets by `block.lua`,
   * windows anchored at their first hit by `block-window.lua` (full until
   * the block ends); one call per script and Cluster slot (`redis-blocks.ts`).
   */
  block(request: BlockRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: false, decisions: [] });
    return this.guard.run('block', () =>
      blockBuckets(request, this.keyPrefix, (op, buckets) => this.perSlot(op, buckets, now)),
    );
  }

  peek(request: BucketsRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [] });
    // No atomicity to keep across slots when nothing is written.
    return this.guard.run('peek', () => this.perSlot(PEEK, this.buckets(checks, now), now));
  }

  reset(request: BucketsRequest): Promise<void> {
    const { checks } = request;
    if (checks.length === 0) return Promise.resolve();
    return this.guard.run('reset', async () => {
      const keys = checks.map((check) => redisKey(this.keyPrefix, check.key));
      // Consumes made before this reset reach Redis before it (script-batch.ts).
      this.scripts.flush();
      const groups = this.cluster ? groupBySlot(keys) : undefined;
      if (groups === undefined || groups.length === 1) await this.client.del(...keys);
      else await Promise.all(groups.map((group) => this.client.del(...pick(keys, group))));
    });
  }

  /**
   * Stops accepting calls. The client is left open: it was passed in, so its
   * owner closes it. The store's only timer is the one that times its calls
   * out (`deadlines.ts`): `unref()`'d, and not re-armed once no call is waiting.
   */
  close(): void {
    this.guard.close();
  }

  /**
   * A PING through the store's own rules (fails fast when the client is not
   * connected, or after `timeoutMs`): `'up'` with its round trip, else
   * `'down'` with why. Never rejects.
   */
  async health(request: HealthRequest): Promise<StoreHealth> {
    const started = performance.now();
    const client = this.client;
    try {
      await this.guard.run(
        'PING',
        () => (client.ping ? client.ping() : client.eval('return 1', 0)),
        request.timeoutMs,
      );
      return {
        status: 'up',
        store: 'redis',
        latencyMs: Math.round((performance.now() - started) * 100) / 100,
      };
    } catch (error) {
      return {
        status: 'down',
        store: 'redis',
        error: error instanceof Error ? error.message : String(error),
      };
    }
  }

  private buckets(checks: readonly BucketRef[] | readonly RateLimitCheck[], now: number): Bucket[] {
    return checks.map((check) => {
      const { limit } = check;
      const cost = 'cost' in check ? check.cost : 0;
      const key = redisKey(this.keyPrefix, check.key);
      if (!isWindowLimit(limit))
        return { redisKey: key, rate: limit.rate, burst: limit.burst, cost };
      return { redisKey: key, rate: 0, burst: limit.quota, cost, spec: windowSpec(limit, now) };
    });
  }

  /** Consume or lease: one call when the buckets share a slot, else the multi-slot protocol. */
  private charge(
    kind: 'consume' | 'lease',
    buckets: readonly Bucket[],
    now: number,
    fleet?: FleetMember,
  ): Promise<ScriptAnswer> {
    const groups = this.cluster ? groupBySlot(buckets.map(keyOf)) : undefined;
    if (groups === undefined || groups.length === 1) {
      if (kind === 'consume') return this.scripts.run(CONSUME, buckets, now);
      return this.scripts.run(
        fleet ? { script: 'lease', receipts: false, fleet } : LEASE,
        buckets,
        now,
      );
    }
    return chargeAcrossSlots(
      this.scripts,
      kind,
      buckets,
      groups,
      now,
      () => this.refundFailureCount++,
    );
  }

  /** Peek, refund or settle: one call per slot, all at once. */
  private async perSlot(
    op: Operation,
    buckets: readonly Bucket[],
    now: number,
  ): Promise<ConsumeResult> {
    const groups = this.cluster ? groupBySlot(buckets.map(keyOf)) : undefined;
    if (groups === undefined || groups.length === 1)
      return toConsumeResult(await this.scripts.run(op, buckets, now));
    return eachSlot(this.scripts, op, buckets, groups, now);
  }
}

function keyOf(bucket: Bucket): string {
  return bucket.redisKey;
}

/** A pace asked, as the lease script reads it (`scripts/lease.lua.ts`): '' for none; an `ask` of 0 gives the caller's pace back. */
function paceArg(pace: PaceAsk | undefined): string {
  if (pace === undefined) return '';
  const { ask, tokens, minMs, maxMs, sureMs, instances } = pace;
  const { giveBack = 0, held = 0, heldMs = 0 } = pace;
  const numbers = [ask, tokens, minMs, maxMs, sureMs, instances, giveBack, held, heldMs];
  const valid = numbers.every((x) => Number.isFinite(x) && x >= 0);
  if (!valid || !(tokens > 0 && minMs >= 1 && maxMs >= minMs && instances >= 1)) return '';
  const ms = [minMs, maxMs, sureMs].map((x) => Math.ceil(x)).join(':');
  const told = `${giveBack}:${held}:${Math.ceil(heldMs)}`;
  const saved = pace.saved !== undefined && pace.saved >= 0 ? `:${pace.saved}` : '';
  const { lumpMs } = pace;
  const keeps = saved !== '' && lumpMs !== undefined && lumpMs >= 0 ? `:${Math.ceil(lumpMs)}` : '';
  return `${ask}:${tokens}:${ms}:${Math.floor(instances)}:${told}${saved}${keeps}`;
}
