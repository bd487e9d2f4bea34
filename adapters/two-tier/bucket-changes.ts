import { gcraBlock, gcraRefund, gcraSettle } from '../../lib/algorithms/gcra.js';
import type {
  BlockRequest,
  BucketsRequest,
  ConsumeResult,
  MaybePromise,
  RefundRequest,
  SettleRequest,
} from '../../lib/store/rate-limit-store.interface.js';
import { isWindowLimit } from '../../lib/store/rate-limit-store.interface.js';
import type { RelativeTime } from '../../lib/store/relative-time.js';
import type { RedisStore } from '../redis/index.js';
import type { DenyCache } from './deny-cache.js';
import type { Fallback } from './fallback.js';
import type { GiveBackQueue } from './give-back-queue.js';
import type { KeyTable } from './key-table.js';
import type { LeaseBook } from './lease-book.js';
import { changeViews, withoutLease } from './local-decision.js';

/**
 * TwoTierStore's operations on the buckets beside consume: `peek`,
 * `refund`, `block`, `reset`, each one Redis call with this instance's view
 * of the bucket (its lease, its cached denial) kept consistent with it. The
 * store checks that it is open and delegates here.
 *
 * @internal
 */
export class BucketChanges {
  /** Redis calls made: peeks, refunds, blocks, resets. */
  calls = 0;

  constructor(
    private readonly redis: RedisStore,
    private readonly time: RelativeTime,
    private readonly keys: KeyTable,
    private readonly leases: LeaseBook,
    private readonly denials: DenyCache,
    private readonly giveBacks: GiveBackQueue,
    private readonly fallback: Fallback,
  ) {}

  /**
   * The buckets as Redis has them, seen without this instance's leases.
   * While the store runs on its local fallback, the fallback's buckets (the
   * local share) instead. A Redis failure rejects: a peek has no `failMode`.
   */
  peek(request: BucketsRequest): MaybePromise<ConsumeResult> {
    const { checks } = request;
    if (checks.length === 0) return { allowed: true, decisions: [] };
    const now = this.time.relative(request.now);
    if (this.fallback.degraded) return this.fallback.peek(checks, request.now);
    this.calls++;
    return this.redis.peek(request).then((result) => ({
      allowed: true,
      decisions: result.decisions.map((decision, i) => {
        const check = checks[i]!;
        return isWindowLimit(check.limit)
          ? decision
          : withoutLease(decision, this.keys.get(check.key), check.limit, now);
      }),
    }));
  }

  /**
   * Gives tokens back to the Redis buckets (and to this instance's view of
   * them, whose cached denials no longer hold). Rejects when Redis cannot be
   * reached: the caller asked for the shared bucket to change.
   */
  refund(request: RefundRequest): MaybePromise<ConsumeResult> {
    const now = this.time.relative(request.now);
    changeViews(request.checks, this.keys, this.denials, (state, check) =>
      gcraRefund(state.shadowTat, now, check.limit, check.cost),
    );
    this.giveBacks.flush();
    this.calls++;
    return this.redis.refund(request);
  }

  /**
   * Settles reservations in Redis (one script call per slot), after this
   * instance's view of each bucket: a lease held here goes back first, as
   * for a refund, so that a refund cannot leave a lease on top of a full
   * bucket and a debt is charged to the shared bucket, which every instance
   * then waits out (the key's next decision asks Redis). The fleet bound is
   * Redis' own. Rejects when Redis cannot be reached.
   */
  settle(request: SettleRequest): MaybePromise<ConsumeResult> {
    const now = this.time.relative(request.now);
    changeViews(request.checks, this.keys, this.denials, (state, check) =>
      gcraSettle(state.shadowTat, now, check.limit, check.delta),
    );
    this.giveBacks.flush();
    this.calls++;
    return this.redis.settle(request);
  }

  /**
   * Blocks the Redis buckets (a penalty) and this instance's view of them:
   * a lease held here goes back first (the bucket is to be empty), and the
   * key's next decision asks Redis. Rejects when Redis cannot be reached.
   */
  block(request: BlockRequest): MaybePromise<ConsumeResult> {
    const now = this.time.relative(request.now);
    if (request.unlessBlocked === true) {
      // Whether a bucket is blocked anew is Redis' to say (its block mark): the view follows its answer.
      changeViews(request.checks, this.keys, this.denials, (state) => state.shadowTat);
      this.giveBacks.flush();
      this.calls++;
      return this.redis.block(request).then((result) => {
        request.checks.forEach((check, i) => {
          const state = this.keys.get(check.key);
          const after = result.decisions[i];
          if (state === undefined || after === undefined || isWindowLimit(check.limit)) return;
          state.shadowTat = Math.max(state.shadowTat ?? now, now + after.resetMs);
        });
        return result;
      });
    }
    changeViews(request.checks, this.keys, this.denials, (state, check) =>
      gcraBlock(state.shadowTat, now, check.limit, check.durationMs),
    );
    this.giveBacks.flush();
    this.calls++;
    return this.redis.block(request);
  }

  /**
   * Forgets the buckets locally (leases dropped: the Redis bucket they came
   * from is deleted, so full again) and in Redis. Rejects when Redis cannot
   * be reached: the caller asked for the shared bucket to change.
   */
  reset(request: BucketsRequest): MaybePromise<void> {
    const { checks } = request;
    if (checks.length === 0) return;
    for (const check of checks) this.keys.forget(check.key);
    this.fallback.reset(checks, request.now);
    this.calls++;
    return this.redis.reset(request);
  }
}
