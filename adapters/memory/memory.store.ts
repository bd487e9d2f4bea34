import { algorithmOf, type BucketState } from '../../lib/algorithms/algorithm.js';
import { gcraBlock, gcraConsume } from '../../lib/algorithms/gcra.js';
import { describeValue, optionError } from '../../lib/errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../../lib/errors/unknown-options.js';
import { consumeAllOrNothing, type BucketStates } from '../../lib/store/all-or-nothing.js';
import type { BlockRequest,
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  RateLimitStore,
  RefundRequest,
  StoreHealth,
} from '../../lib/store/rate-limit-store.interface.js';
import { isWindowLimit } from '../../lib/store/rate-limit-store.interface.js';
import { RelativeTime } from '../../lib/store/relative-time.js';
import { BucketShard } from './bucket-shard.js';
import { MemorySlots } from './memory-slots.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Hard cap on the number of buckets held. When a new bucket would exceed it,
   * a bucket is evicted (and counted in {@link MemoryStore.evictions}): that
   * caller gets a full bucket again. The one evicted is the closest to full
   * (earliest TAT) among 8 candidates from the oldest end (first inserted) of
   * the new bucket's shard; candidates passed over stay candidates, so a
   * denied (drained) bucket is not evicted before fuller ones.
   * @default 1_000_000
   */
  readonly maxKeys?: number;
}

const MEMORY_STORE_OPTIONS = optionNames<MemoryStoreOptions>({ maxKeys: true });

/** Entries examined by one step of the incremental sweep. */
const SWEEP_STEP = 2;
/**
 * Decisions between two sweep steps when no bucket is added. Memory only
 * grows with new buckets, and each new bucket pays a step: between them the
 * sweep need only keep `size` honest, not race the growth.
 */
const SWEEP_EVERY = 8;
/** Shards one sweep may move through when they are (nearly) empty. */
const SWEEP_HOPS = 8;
/** Target size of one shard: a V8 rehash of this many entries takes well under 1 ms. */
const SHARD_SIZE = 16_384;
const MAX_SHARDS = 256;
/** Characters of the key hashed to pick a shard: the caller identity sits at the end. */
const HASHED_SUFFIX = 24;

/**
 * In-process store: bucket key → GCRA theoretical arrival time (one number),
 * or a window's state (start, end, counts: `lib/algorithms/window-state.ts`).
 *
 * - O(1) per decision, no timer at all (so nothing to `unref`, nothing pinning
 *   async contexts), one number per key.
 * - Exact cleanup: a bucket that is full again is indistinguishable from an
 *   absent one, so it is deleted. An incremental sweep examines a couple of
 *   entries per new bucket and every eighth decision, so memory is reclaimed
 *   without ever pausing the event loop for a pass over all keys. A bucket
 *   charged again is updated in place (one hash operation).
 * - Bounded: `maxKeys` is a hard cap on the total. Large stores are split
 *   into shards of about 16k keys (so that no V8 rehash of one huge `Map`
 *   pauses the event loop). At the cap, a new bucket evicts, in its own
 *   shard, the bucket closest to full among a few candidates (see
 *   `BucketShard.evictClosestToFull`): bounded work, and a denied bucket is
 *   not handed back by minting keys.
 * - Precise: times are kept relative to the first `now` the store sees, where
 *   doubles resolve far below a microsecond (at `Date.now()` magnitudes they
 *   are 0.24 µs apart, coarser than a token at 1e6/s).
 *
 * Answers synchronously: the guard adds no promise on this path.
 *
 * @publicApi
 */
export class MemoryStore implements RateLimitStore {
  private readonly shards: readonly BucketShard[];
  private readonly shardMask: number;
  private readonly maxKeys: number;
  private count = 0;
  private evicted = 0;
  private sweepShard = 0;
  /** Decisions since the last sweep step. */
  private decisions = 0;
  /** The current decision's `now` (relative), for eviction: a candidate already full goes first. */
  private now = 0;
  private readonly time = new RelativeTime();
  /**
   * Slots of `concurrency` limits, apart from the buckets: a slot is held
   * until released, not until a time, so it can never be evicted like a
   * bucket. At most `maxKeys` of them.
   */
  readonly slots: MemorySlots;
  /** The shards as the shared all-or-nothing evaluation reads and writes them. */
  private readonly states: BucketStates = {
    read: (key) => this.shardOf(key).entries.get(key),
    write: (key, state) => this.store(this.shardOf(key), key, state, this.now),
  };

  constructor(options: MemoryStoreOptions = {}) {
    rejectUnknownOptions('MemoryStore', options, MEMORY_STORE_OPTIONS);
    const maxKeys = options.maxKeys ?? 1_000_000;
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
      throw optionError('MemoryStore', 'maxKeys', `must be a positive integer, got ${describeValue(options.maxKeys)}`);
    }
    let count = 1;
    while (count < MAX_SHARDS && maxKeys / (count * 2) >= SHARD_SIZE) count *= 2;
    this.maxKeys = maxKeys;
    this.shardMask = count - 1;
    this.shards = Array.from({ length: count }, () => new BucketShard());
    this.slots = new MemorySlots(maxKeys);
  }

  /** Buckets currently held (full buckets are dropped, so this is the number of callers being limited). */
  get size(): number {
    return this.count;
  }

  /** Buckets evicted because `maxKeys` was reached, since start. */
  get evictions(): number {
    return this.evicted;
  }

  consume(request: ConsumeRequest): ConsumeResult {
    const { checks } = request;
    const now = this.time.relative(request.now);
    this.now = now;
    if (++this.decisions === SWEEP_EVERY) {
      this.decisions = 0;
      this.sweep(now);
    }
    const origin = this.time.origin;
    if (checks.length !== 1) return consumeAllOrNothing(this.states, checks, now, origin);
    // The common case, without the bookkeeping of the all-or-nothing path.
    const check = checks[0]!;
    const { limit } = check;
    const shard = this.shardOf(check.key);
    const state = shard.entries.get(check.key);
    // Token buckets (the hottest path) call GCRA directly, without the dispatch's wrapper object.
    const outcome =
      limit.algorithm === 'token-bucket'
        ? gcraConsume(state as number | undefined, now, limit, check.cost)
        : algorithmOf(limit).consume(state, now, limit, check.cost, origin);
    if (outcome.decision.allowed) {
      const next = 'tat' in outcome ? outcome.tat : outcome.state;
      // A bucket held already is updated in place (one hash operation).
      if (state !== undefined) shard.entries.set(check.key, next);
      else this.insert(shard, check.key, next, now);
    }
    return { allowed: outcome.decision.allowed, decisions: [outcome.decision] };
  }

  peek(request: BucketsRequest): ConsumeResult {
    const now = this.time.relative(request.now);
    const origin = this.time.origin;
    const decisions = request.checks.map((check) => algorithmOf(check.limit).peek(this.states.read(check.key), now, check.limit, origin));
    return { allowed: true, decisions };
  }

  refund(request: RefundRequest): ConsumeResult {
    const now = this.time.relative(request.now);
    const origin = this.time.origin;
    const decisions = request.checks.map((check) => {
      const algorithm = algorithmOf(check.limit);
      const shard = this.shardOf(check.key);
      const state = algorithm.refund(shard.entries.get(check.key), now, check.limit, check.cost, origin);
      if (state !== undefined) shard.entries.set(check.key, state);
      else if (shard.delete(check.key)) this.count--;
      return algorithm.peek(state, now, check.limit, origin);
    });
    return { allowed: true, decisions };
  }

  block(request: BlockRequest): ConsumeResult {
    const now = this.time.relative(request.now);
    const decisions = request.checks.map((check) => {
      const { limit } = check;
      // Refused at start-up (resolve-limit.ts): a window has no refill to block.
      if (isWindowLimit(limit)) throw new TypeError(`MemoryStore: block is not supported for ${limit.algorithm} limits`);
      const shard = this.shardOf(check.key);
      const tat = gcraBlock(shard.entries.get(check.key) as number | undefined, now, limit, check.durationMs);
      this.store(shard, check.key, tat, now);
      return algorithmOf(limit).peek(tat, now, limit, 0);
    });
    return { allowed: false, decisions };
  }

  reset(request: BucketsRequest): void {
    for (const check of request.checks) if (this.shardOf(check.key).delete(check.key)) this.count--;
  }

  close(): void {
    for (const shard of this.shards) shard.clear();
    this.count = 0;
    this.slots.clear();
  }

  /** Always up: there is nothing remote to fail. */
  health(): Promise<StoreHealth> {
    return Promise.resolve({ status: 'up', store: 'memory' });
  }

  private store(shard: BucketShard, key: string, state: BucketState, now: number): void {
    if (shard.entries.has(key)) shard.entries.set(key, state);
    else this.insert(shard, key, state, now);
  }

  /** A bucket not held yet: counted, and at the cap another one is evicted. */
  private insert(shard: BucketShard, key: string, state: BucketState, now: number): void {
    shard.set(key, state);
    this.count++;
    this.sweep(now);
    if (this.count <= this.maxKeys) return;
    // Over the cap by the key just added: evict from its shard (never the key
    // itself), else from any other.
    for (let i = 0; i <= this.shardMask; i++) {
      const victim = i === 0 ? shard : this.shards[(this.sweepShard + i) & this.shardMask]!;
      if (victim.evictClosestToFull(now, key, this.time.origin)) {
        this.count--;
        this.evicted++;
        return;
      }
    }
  }

  private shardOf(key: string): BucketShard {
    if (this.shardMask === 0) return this.shards[0]!;
    // FNV-1a over the end of the key, where the caller identity is.
    let hash = 0x811c9dc5 ^ key.length;
    for (let i = Math.max(0, key.length - HASHED_SUFFIX); i < key.length; i++) {
      hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    }
    return this.shards[(hash >>> 0) & this.shardMask]!;
  }

  /**
   * A couple of entries per decision, in one shard until its pass ends, then
   * in the next: sparse shards are crossed quickly, and no call examines more
   * than {@link SWEEP_STEP} entries or visits more than {@link SWEEP_HOPS} shards.
   */
  private sweep(now: number): void {
    let budget = SWEEP_STEP;
    for (let hop = 0; budget > 0 && hop < SWEEP_HOPS; hop++) {
      const shard = this.shards[this.sweepShard]!;
      const before = shard.size;
      if (before === 0) {
        // Nothing to examine: no iterator to create either.
        this.sweepShard = (this.sweepShard + 1) & this.shardMask;
        continue;
      }
      const examined = shard.sweep(now, budget, this.time.origin);
      this.count -= before - shard.size;
      budget -= examined;
      if (examined === 0 || budget > 0) this.sweepShard = (this.sweepShard + 1) & this.shardMask;
    }
  }
}
