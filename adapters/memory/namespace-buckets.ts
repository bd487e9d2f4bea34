import type { BucketState } from '../../lib/algorithms/algorithm.js';
import { BucketShard } from './bucket-shard.js';

/** Characters of an identity hashed to pick a shard: addresses and ids vary at the end. */
const HASHED_SUFFIX = 24;

/**
 * The buckets of one namespace (one limit: algorithm, name, route), by
 * caller identity, split into shards of bounded size.
 *
 * Why a table per namespace rather than one map of whole bucket keys: the
 * guard builds `namespace + identity` per request, a fresh string that V8
 * must flatten and hash on every lookup (~40 characters). Here the lookup
 * hashes the identity alone, often a string V8 has hashed already (a
 * client's address is the same string object for every request of its
 * connection): about a third of the guard's cost on a store of 100k callers
 * (`node bench/guard/guard.mjs`).
 *
 * Shards are created on first use, so a namespace with a few callers costs a
 * few small maps. The table keeps its own count and sweep position; the
 * store keeps the total and the cap.
 *
 * @internal
 */
export class NamespaceBuckets {
  private readonly shards: (BucketShard | undefined)[];
  private readonly mask: number;
  private held = 0;
  /** The shard the sweep is in. */
  private sweepShard = 0;
  /** The shard the last eviction was from. */
  private evictShard = 0;

  /** `shardCount`: a power of two. */
  constructor(
    readonly namespace: string,
    shardCount: number,
  ) {
    this.shards = new Array<BucketShard | undefined>(shardCount).fill(undefined);
    this.mask = shardCount - 1;
  }

  /** Buckets held. */
  get size(): number {
    return this.held;
  }

  /** The shard `identity` belongs to (created on first use). */
  shardOf(identity: string): BucketShard {
    const index = this.mask === 0 ? 0 : shardIndex(identity, this.mask);
    return (this.shards[index] ??= new BucketShard());
  }

  get(identity: string): BucketState | undefined {
    return this.shardOf(identity).get(identity);
  }

  /** Hold a bucket known not to be held, in its shard. */
  add(shard: BucketShard, identity: string, state: BucketState): void {
    shard.add(identity, state);
    this.held++;
  }

  /** Drop a bucket; true when it was held. */
  delete(identity: string): boolean {
    if (!this.shardOf(identity).delete(identity)) return false;
    this.held--;
    return true;
  }

  /** True when the last {@link sweep} step finished a pass over every shard (the store then moves on to the next table). */
  passEnded = false;

  /**
   * One step of the incremental sweep: up to `budget` entries of the next
   * shard that has any, buckets full again dropped (exact: a full bucket and
   * an absent one decide the same). Shards not created or empty are skipped
   * (array reads, at most one pass). Returns the entries examined.
   */
  sweep(now: number, budget: number, origin: number): number {
    this.passEnded = false;
    for (let skipped = 0; skipped <= this.mask && this.held > 0; skipped++) {
      const shard = this.shards[this.sweepShard];
      if (shard !== undefined && shard.size > 0) {
        const before = shard.size;
        const examined = shard.sweep(now, budget, origin);
        this.held -= before - shard.size;
        // Mid-pass with the budget spent: stay in this shard.
        if (examined < budget) this.nextShard();
        return examined;
      }
      if (this.nextShard()) return 0;
    }
    this.passEnded = true;
    return 0;
  }

  /**
   * Evict the bucket closest to full among a few candidates (see
   * `BucketShard.evictClosestToFull`) of one shard, the shards taken in turn
   * from one eviction to the next; never `except` (the bucket just added).
   * False when the table has nothing (else) to drop.
   */
  evict(now: number, origin: number, except?: string): boolean {
    for (let i = 0; i <= this.mask; i++) {
      this.evictShard = (this.evictShard + 1) & this.mask;
      const shard = this.shards[this.evictShard];
      if (shard === undefined || !shard.evictClosestToFull(now, except, origin)) continue;
      this.held--;
      return true;
    }
    return false;
  }

  private nextShard(): boolean {
    this.sweepShard = (this.sweepShard + 1) & this.mask;
    this.passEnded = this.sweepShard === 0;
    return this.passEnded;
  }

  clear(): void {
    for (const shard of this.shards) shard?.clear();
    this.held = 0;
  }
}

/** FNV-1a over the end of the identity, where callers differ. */
function shardIndex(identity: string, mask: number): number {
  let hash = 0x811c9dc5 ^ identity.length;
  for (let i = Math.max(0, identity.length - HASHED_SUFFIX); i < identity.length; i++) {
    hash = Math.imul(hash ^ identity.charCodeAt(i), 0x01000193);
  }
  return (hash >>> 0) & mask;
}
