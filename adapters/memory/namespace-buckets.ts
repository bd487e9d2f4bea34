import type { BucketState } from '../../lib/algorithms/algorithm.js';
import { BucketShard, type BlockedStates } from './bucket-shard.js';

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
 * connection).
 *
 * Shards split as the table grows (extendible hashing): a table starts as
 * one shard, and a shard that reaches the target size hands the entries
 * whose next hash bit is set to a new shard, until every shard routes on
 * the store's number of bits (its shard count). So a namespace with a few
 * hundred callers is one small map, not a hundred empty ones, and a split
 * moves one shard's entries, never the table's (filling 1M keys: longest
 * event-loop delay 31 and 41 ms in two runs, splits included; `node
 * --expose-gc bench/memory/memory.mjs churn 1000000 4000000 1000`). The table keeps its own count and
 * sweep position; the store keeps the total and the cap.
 *
 * @internal
 */
export class NamespaceBuckets {
  /** Hash suffix → shard; its length is 2^(the deepest shard's depth). */
  private directory: BucketShard[];
  /** The distinct shards, for the sweep and eviction. */
  private readonly shards: BucketShard[];
  /** Hash bits each shard routes on, by shard. */
  private readonly depths: Map<BucketShard, number>;
  private held = 0;
  /** The shard the sweep is in (index into {@link shards}). */
  private sweepShard = 0;
  /** The shard the last eviction was from. */
  private evictShard = 0;
  /** Hash bits a shard routes on at most: every shard ends at this depth in a full table, so they are of one size. */
  private readonly maxDepth: number;

  /**
   * `maxShards`: a power of two, the most shards the table splits into;
   * `shardSize`: the size at which a shard splits (while it can).
   */
  constructor(
    readonly namespace: string,
    maxShards: number,
    private readonly shardSize: number,
  ) {
    this.maxDepth = Math.log2(maxShards);
    const first = new BucketShard(namespace);
    this.directory = [first];
    this.shards = [first];
    this.depths = new Map([[first, 0]]);
  }

  /** Buckets held. */
  get size(): number {
    return this.held;
  }

  /** Shards the table has split into. */
  get shardCount(): number {
    return this.shards.length;
  }

  /** The shard `identity` belongs to. */
  shardOf(identity: string): BucketShard {
    const directory = this.directory;
    return directory.length === 1
      ? directory[0]!
      : directory[identityHash(identity) & (directory.length - 1)]!;
  }

  get(identity: string): BucketState | undefined {
    return this.shardOf(identity).get(identity);
  }

  /** Hold a bucket known not to be held, in its shard (which may then split). */
  add(shard: BucketShard, identity: string, state: BucketState): void {
    shard.add(identity, state);
    this.held++;
    if (shard.size >= this.shardSize && this.depths.get(shard)! < this.maxDepth) this.split(shard);
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
   * an absent one decide the same). Empty shards are skipped (at most one
   * pass). Returns the entries examined.
   */
  sweep(now: number, budget: number, origin: number): number {
    this.passEnded = false;
    for (let skipped = 0; skipped < this.shards.length && this.held > 0; skipped++) {
      const shard = this.shards[this.sweepShard]!;
      if (shard.size > 0) {
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
   * Evict the state whose loss admits least among a few candidates (see
   * `BucketShard.evictClosestToFull`) of one shard, the shards taken in turn
   * from one eviction to the next; never `except` (the bucket just added).
   * False when the table has nothing (else) to drop. `spareBlocked`: one
   * shard only, and nothing dropped when its pick serves a block (the
   * store's first pass, see `MemoryStore`).
   */
  evict(
    now: number,
    origin: number,
    except?: string,
    blocks?: BlockedStates,
    spareBlocked = false,
  ): boolean {
    const tries = spareBlocked ? 1 : this.shards.length;
    for (let i = 0; i < tries; i++) {
      this.evictShard = (this.evictShard + 1) % this.shards.length;
      const shard = this.shards[this.evictShard]!;
      if (!shard.evictClosestToFull(now, except, origin, blocks, spareBlocked)) continue;
      this.held--;
      return true;
    }
    return false;
  }

  private nextShard(): boolean {
    this.sweepShard = (this.sweepShard + 1) % this.shards.length;
    this.passEnded = this.sweepShard === 0;
    return this.passEnded;
  }

  /**
   * Split `shard` on its next hash bit: the entries with that bit set move
   * to a new shard (their states with them), and the directory, doubled if
   * needed, sends their suffixes there.
   */
  private split(shard: BucketShard): void {
    const depth = this.depths.get(shard)!;
    if (1 << depth === this.directory.length)
      this.directory = this.directory.concat(this.directory);
    const sibling = new BucketShard(this.namespace);
    const bit = 1 << depth;
    for (const identity of [...shard.keys()]) {
      if ((identityHash(identity) & bit) === 0) continue;
      sibling.add(identity, shard.get(identity)!);
      shard.delete(identity);
    }
    for (let i = 0; i < this.directory.length; i++) {
      if (this.directory[i] === shard && (i & bit) !== 0) this.directory[i] = sibling;
    }
    this.depths.set(shard, depth + 1);
    this.depths.set(sibling, depth + 1);
    this.shards.push(sibling);
  }

  clear(): void {
    for (const shard of this.shards) shard.clear();
    this.held = 0;
  }
}

/**
 * FNV-1a-style over the end of the identity, where callers differ, two
 * UTF-16 units per multiply (half the dependent multiplies of one per
 * character: this hash runs on every decision of a split table), with a
 * final fold so the low bits the directory reads depend on every unit.
 */
function identityHash(identity: string): number {
  const length = identity.length;
  let hash = 0x811c9dc5 ^ length;
  let i = length > HASHED_SUFFIX ? length - HASHED_SUFFIX : 0;
  for (; i + 1 < length; i += 2) {
    hash = Math.imul(
      hash ^ (identity.charCodeAt(i) | (identity.charCodeAt(i + 1) << 16)),
      0x01000193,
    );
  }
  if (i < length) hash = Math.imul(hash ^ identity.charCodeAt(i), 0x01000193);
  return (hash ^ (hash >>> 15)) >>> 0;
}
