import { algorithmOf, type BucketState } from '../../lib/algorithms/algorithm.js';
import { gcraConsume } from '../../lib/algorithms/gcra.js';
import { describeValue, optionError } from '../../lib/errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../../lib/errors/unknown-options.js';
import { consumeAllOrNothing, type BucketStates } from '../../lib/store/all-or-nothing.js';
import type {
  BlockRequest,
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  RateLimitStore,
  RefundRequest,
  SettleRequest,
  StoreHealth,
} from '../../lib/store/rate-limit-store.interface.js';
import { RelativeTime } from '../../lib/store/relative-time.js';
import type { BucketKeyParts } from '../../lib/store/bucket-key.js';
import type { BlockedStates, BucketShard } from './bucket-shard.js';
import { NamespaceBuckets } from './namespace-buckets.js';
import { MemorySlots } from './memory-slots.js';
import { MemoryBucketChanges, partsOf } from './memory-bucket-changes.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Hard cap on the number of buckets held. When a new bucket would exceed it,
   * a bucket is evicted (and counted in {@link MemoryStore.evictions}): that
   * caller gets a full bucket again. The one evicted is, among 8 candidates
   * from the oldest end (first inserted) of a shard, the one whose loss
   * admits least (`eviction-order.ts`: a block last; the bucket closest to
   * full, the window holding the least); candidates passed over stay
   * candidates, so a denied bucket or blocked window is not evicted before
   * fuller ones.
   *
   * Higher than `TwoTierStore`'s `maxKeys` (100,000) on purpose: here the
   * buckets are the only record of what each caller spent, so an eviction
   * hands a caller a full bucket, and a cap a flood of minted identities can
   * reach lets the others start over. A bucket costs 66 to 94 bytes of heap
   * with an 8-character identity (docs/benchmarks.md), under 100 MB at the
   * default. `TwoTierStore`'s local tier only caches what Redis holds.
   * @default 1_000_000
   */
  readonly maxKeys?: number;
}

const MEMORY_STORE_OPTIONS = optionNames<MemoryStoreOptions>({ maxKeys: true });

/** Entries examined by the sweep step each new bucket pays. */
const SWEEP_STEP = 2;
/**
 * Decisions that add no bucket between two sweep steps (a decision that adds
 * one pays {@link SWEEP_STEP} instead, never both), and the entries such a
 * step examines: the same two entries per eight decisions as one step
 * of {@link SWEEP_STEP} every eighth, in half as many calls into the sweep
 * (each call walks table → shard before it examines anything).
 * Memory only grows with new buckets, and each new bucket pays a step:
 * between them the sweep need only keep `size` honest, not race the growth.
 */
const SWEEP_EVERY = 16;
const IDLE_SWEEP_STEP = 4;
/** Shards one sweep may move through when they are (nearly) empty. */
const SWEEP_HOPS = 8;
/**
 * Target size of one shard. V8 rebuilds a `Map`'s table in one go when live
 * plus deleted entries fill it, and under churn every shard, taking the same
 * share of insertions, reaches that point at about the same time: at 16k keys
 * per shard (1M keys in 32 shards) such bunched rebuilds stalled the event
 * loop 60-97 ms; at 4k (128 shards), 29-37 ms at most (4M insertions at the
 * 1M cap, monitorEventLoopDelay: `node --expose-gc bench/memory/memory.mjs
 * churn 1000000 4000000 1000`, three runs; 33-35 ms in `npm run bench`).
 */
const SHARD_SIZE = 4_096;
/**
 * Shards an eviction may look at, once any block was written, for a state
 * that serves no block before it settles for one: a blocked caller alone in
 * one limit's table outlives a flood in another's, at a bounded cost.
 */
const SPARING_TRIES = 8;
const MAX_SHARDS = 256;

/**
 * In-process store: bucket key → GCRA theoretical arrival time (one number),
 * or a window's state (start, end, counts: `lib/algorithms/window-state.ts`),
 * held in a table per namespace (limit) by caller identity
 * (`namespace-buckets.ts`: one short, often already hashed, string per lookup).
 *
 * - O(1) per decision, no timer at all (so nothing to `unref`, nothing pinning
 *   async contexts), one number per key, in a typed array (`bucket-slots.ts`:
 *   no heap object per bucket for the collector to visit).
 * - Exact cleanup: a bucket that is full again is indistinguishable from an
 *   absent one, so it is deleted. An incremental sweep examines a couple of
 *   entries per new bucket and four every sixteenth decision, so memory is reclaimed
 *   without ever pausing the event loop for a pass over all keys. A bucket
 *   charged again is updated in its slot (one hash operation).
 * - Bounded: `maxKeys` is a hard cap on the total. Large tables are split
 *   into shards of about 4k keys (so that no V8 rehash of one huge `Map`
 *   pauses the event loop); a table left empty is dropped by the sweep. At
 *   the cap, a new bucket evicts another: tables and their shards are taken
 *   in turn, and in one shard, among a few candidates from its oldest end,
 *   the state whose loss admits least goes (see
 *   `BucketShard.evictClosestToFull`): bounded work, and a denied bucket or
 *   a block is not handed back by minting keys.
 * - Precise: times are kept relative to the first `now` the store sees, where
 *   doubles resolve far below a microsecond (at `Date.now()` magnitudes they
 *   are 0.24 µs apart, coarser than a token at 1e6/s).
 *
 * Answers synchronously: the guard adds no promise on this path.
 *
 * @publicApi
 */
export class MemoryStore implements RateLimitStore {
  /** The `store` attribute of metrics. */
  readonly kind = 'memory';
  /** Namespace → its buckets by identity. */
  private readonly tables = new Map<string, NamespaceBuckets>();
  /** The same tables, in the order the sweep visits them. */
  private readonly tableList: NamespaceBuckets[] = [];
  /** The table last asked for: a route's requests ask for the same one over and over. */
  private lastTable: NamespaceBuckets | undefined;
  /** Shards a table splits into at most (power of two, from `maxKeys`). */
  private readonly shardCount: number;
  private readonly maxKeys: number;
  private count = 0;
  private evicted = 0;
  private sweepTable = 0;
  /** The table the last eviction was from. */
  private evictTable = 0;
  /** Decisions that added no bucket since the last idle sweep step. */
  private decisions = 0;
  /** The current decision's `now` (relative), for eviction: a candidate already full goes first. */
  private now = 0;
  private readonly time = new RelativeTime();
  /** Settlements and blocks (`memory-bucket-changes.ts`), with the marks of the blocks written. */
  private readonly changes: MemoryBucketChanges;
  /**
   * Slots of `concurrency` limits, apart from the buckets: a slot is held
   * until released, not until a time, so it can never be evicted like a
   * bucket. At most `maxKeys` of them.
   */
  readonly slots: MemorySlots;
  /** Which held states serve a block, for eviction (bucket keys are namespace + identity). */
  private readonly blocks: BlockedStates = {
    serving: (namespace, identity, state, now) =>
      this.changes.blocking(namespace + identity, state, now),
  };
  /** The tables as the shared all-or-nothing evaluation reads and writes them. */
  private readonly states: BucketStates = {
    read: (_key, ref) => this.read(partsOf(ref)),
    write: (_key, state, ref) => this.write(partsOf(ref), state, this.now),
  };

  constructor(options: MemoryStoreOptions = {}) {
    rejectUnknownOptions('MemoryStore', options, MEMORY_STORE_OPTIONS);
    const maxKeys = options.maxKeys ?? 1_000_000;
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
      throw optionError(
        'MemoryStore',
        'maxKeys',
        `must be a positive integer, got ${describeValue(options.maxKeys)}`,
      );
    }
    let count = 1;
    while (count < MAX_SHARDS && maxKeys / (count * 2) >= SHARD_SIZE) count *= 2;
    this.maxKeys = maxKeys;
    this.shardCount = count;
    this.slots = new MemorySlots(maxKeys);
    this.changes = new MemoryBucketChanges(
      {
        read: (parts) => this.read(parts),
        write: (parts, state, now) => this.write(parts, state, now),
        delete: (parts) => this.delete(parts),
      },
      maxKeys,
    );
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
    const origin = this.time.origin;
    if (checks.length !== 1) {
      this.idleSweep(now);
      return consumeAllOrNothing(this.states, checks, now, origin);
    }
    // The common case, without the bookkeeping of the all-or-nothing path.
    const check = checks[0]!;
    const { limit } = check;
    const { namespace, identity } = partsOf(check);
    const table = this.tableFor(namespace);
    const shard = table.shardOf(identity);
    const slot = shard.slotOf(identity);
    const state = slot === -1 ? undefined : shard.stateAt(slot);
    // Token buckets (the hottest path) call GCRA directly, without the dispatch's wrapper object.
    const outcome =
      limit.algorithm === 'token-bucket'
        ? gcraConsume(state as number | undefined, now, limit, check.cost)
        : algorithmOf(limit).consume(state, now, limit, check.cost, origin);
    if (outcome.decision.allowed) {
      const next = 'tat' in outcome ? outcome.tat : outcome.state;
      // A bucket held already is updated in its slot (no second hash operation).
      if (slot !== -1) shard.update(slot, next);
      else {
        // Pays its own sweep step, so a call that adds a bucket never runs two.
        this.insert(table, shard, identity, next, now);
        return { allowed: true, decisions: [outcome.decision] };
      }
    }
    // A decision that added no bucket: every sixteenth runs an idle sweep step.
    this.idleSweep(now);
    return { allowed: outcome.decision.allowed, decisions: [outcome.decision] };
  }

  peek(request: BucketsRequest): ConsumeResult {
    const now = this.time.relative(request.now);
    const origin = this.time.origin;
    const decisions = request.checks.map((check) =>
      algorithmOf(check.limit).peek(this.read(partsOf(check)), now, check.limit, origin),
    );
    return { allowed: true, decisions };
  }

  refund(request: RefundRequest): ConsumeResult {
    const now = this.time.relative(request.now);
    const origin = this.time.origin;
    const decisions = request.checks.map((check) => {
      const algorithm = algorithmOf(check.limit);
      const parts = partsOf(check);
      const state = algorithm.refund(this.read(parts), now, check.limit, check.cost, origin);
      if (state !== undefined) this.write(parts, state, now);
      else this.delete(parts);
      return algorithm.peek(state, now, check.limit, origin);
    });
    return { allowed: true, decisions };
  }

  /**
   * Settles reservations (`gcraSettle`): a charge past empty puts the bucket
   * in debt, a refund never fills it past full. Synchronous, so atomic.
   */
  settle(request: SettleRequest): ConsumeResult {
    const decisions = this.changes.settle(request.checks, this.time.relative(request.now));
    return { allowed: true, decisions };
  }

  block(request: BlockRequest): ConsumeResult {
    const now = this.time.relative(request.now);
    const unlessBlocked = request.unlessBlocked === true;
    const decisions = request.checks.map((check) =>
      this.changes.block(check, now, this.time.origin, unlessBlocked),
    );
    return { allowed: false, decisions };
  }

  reset(request: BucketsRequest): void {
    for (const check of request.checks) {
      this.delete(partsOf(check));
      this.changes.forget(check.key);
    }
  }

  close(): void {
    for (const table of this.tableList) table.clear();
    this.tables.clear();
    this.tableList.length = 0;
    this.lastTable = undefined;
    this.count = 0;
    this.slots.clear();
    this.changes.clear();
  }

  /** Always up: there is nothing remote to fail. */
  health(): Promise<StoreHealth> {
    return Promise.resolve({ status: 'up', store: 'memory' });
  }

  /** The table of `namespace`, created on first use. */
  private tableFor(namespace: string): NamespaceBuckets {
    const last = this.lastTable;
    if (last !== undefined && last.namespace === namespace) return last;
    let table = this.tables.get(namespace);
    if (table === undefined) {
      table = new NamespaceBuckets(namespace, this.shardCount, SHARD_SIZE);
      this.tables.set(namespace, table);
      this.tableList.push(table);
    }
    this.lastTable = table;
    return table;
  }

  private read({ namespace, identity }: BucketKeyParts): BucketState | undefined {
    return this.tables.get(namespace)?.get(identity);
  }

  private write({ namespace, identity }: BucketKeyParts, state: BucketState, now: number): void {
    const table = this.tableFor(namespace);
    const shard = table.shardOf(identity);
    const slot = shard.slotOf(identity);
    if (slot !== -1) shard.update(slot, state);
    else this.insert(table, shard, identity, state, now);
  }

  private delete({ namespace, identity }: BucketKeyParts): void {
    if (this.tables.get(namespace)?.delete(identity)) this.count--;
  }

  /** A bucket not held yet: counted, and at the cap another one is evicted. */
  private insert(
    table: NamespaceBuckets,
    shard: BucketShard,
    identity: string,
    state: BucketState,
    now: number,
  ): void {
    table.add(shard, identity, state);
    this.count++;
    this.sweep(now, SWEEP_STEP);
    if (this.count <= this.maxKeys) return;
    // Over the cap by the bucket just added: evict from the tables in turn
    // (never that bucket), each from the oldest end of its shards in turn.
    const origin = this.time.origin;
    const tables = this.tableList;
    // No block written (the common case): no block to look up per candidate.
    const blocks = this.changes.hasBlocks ? this.blocks : undefined;
    // First a few shards that drop nothing serving a block (SPARING_TRIES), then any.
    for (let i = 0; blocks !== undefined && i < SPARING_TRIES; i++)
      if (this.evictFrom(now, origin, table, identity, blocks, true)) return;
    for (let i = 0; i < tables.length; i++) {
      if (this.evictFrom(now, origin, table, identity, blocks, false)) return;
    }
  }

  /** Evict from the next table in turn (never `identity`, just added to `added`); true when one went. */
  private evictFrom(
    now: number,
    origin: number,
    added: NamespaceBuckets,
    identity: string,
    blocks: BlockedStates | undefined,
    spareBlocked: boolean,
  ): boolean {
    const tables = this.tableList;
    this.evictTable = (this.evictTable + 1) % tables.length;
    const candidate = tables[this.evictTable]!;
    const except = candidate === added ? identity : undefined;
    if (!candidate.evict(now, origin, except, blocks, spareBlocked)) return false;
    this.count--;
    this.evicted++;
    return true;
  }

  /** Every {@link SWEEP_EVERY}-th decision that adds no bucket: one step of {@link IDLE_SWEEP_STEP} entries. */
  private idleSweep(now: number): void {
    if (++this.decisions !== SWEEP_EVERY) return;
    this.decisions = 0;
    this.sweep(now, IDLE_SWEEP_STEP);
  }

  /**
   * A couple of entries per call, in one shard until its pass ends, then in
   * the next, table after table: sparse shards are crossed quickly, and no
   * call examines more than `budget` entries or visits more than
   * {@link SWEEP_HOPS} shards. A table found empty at the end of its pass is
   * dropped, so namespaces come and go without bound on neither.
   */
  private sweep(now: number, budget: number): void {
    const origin = this.time.origin;
    for (let hop = 0; budget > 0 && hop < SWEEP_HOPS && this.tableList.length > 0; hop++) {
      if (this.sweepTable >= this.tableList.length) this.sweepTable = 0;
      const table = this.tableList[this.sweepTable]!;
      const before = table.size;
      budget -= table.sweep(now, budget, origin);
      this.count -= before - table.size;
      // Emptied (or created by a call that charged nothing): dropped, so that namespaces come and go.
      if (table.size === 0) this.dropTable(this.sweepTable);
      else if (table.passEnded) this.sweepTable++;
    }
  }

  private dropTable(index: number): void {
    const table = this.tableList[index]!;
    this.tableList[index] = this.tableList[this.tableList.length - 1]!;
    this.tableList.pop();
    this.tables.delete(table.namespace);
    if (this.lastTable === table) this.lastTable = undefined;
  }
}
