import { algorithmOf, type BucketState } from '../../lib/algorithms/algorithm.js';
import { anchoredWindowBlock } from '../../lib/algorithms/fixed-window.js';
import { gcraBlock, gcraSettle } from '../../lib/algorithms/gcra.js';
import type { RateLimitDecision } from '../../lib/algorithms/rate-limit-decision.js';
import type { WindowState } from '../../lib/algorithms/window-state.js';
import { splitBucketKey, type BucketKeyParts } from '../../lib/store/bucket-key.js';
import {
  isWindowLimit,
  type BlockRequest,
  type BucketRef,
  type FixedWindowLimit,
  type SettleRequest,
} from '../../lib/store/rate-limit-store.interface.js';

/** The buckets of `MemoryStore` as its changes read and write them (times relative to the store's origin). */
export interface MemoryBucketTable {
  read(parts: BucketKeyParts): BucketState | undefined;
  write(parts: BucketKeyParts, state: BucketState, now: number): void;
  delete(parts: BucketKeyParts): void;
}

/**
 * What `MemoryStore` does to a bucket besides admitting calls: settlements
 * (reserve and settle) and blocks (`blockDuration`, and the throttler
 * compat's blocks on a first-hit window), with the marks of the blocks
 * written. Synchronous, so each is atomic.
 *
 * @internal
 */
export class MemoryBucketChanges {
  /**
   * The blocks written (`block`), by bucket key: the TAT written and when
   * the block ends, so that a penalty for a retry near the end of a block
   * (`unlessBlocked`) leaves the block as it is. At most `maxKeys`.
   */
  private readonly blockMarks = new Map<string, { readonly tat: number; readonly end: number }>();

  constructor(
    private readonly buckets: MemoryBucketTable,
    private readonly maxKeys: number,
  ) {}

  /**
   * Settles reservations (`gcraSettle`): a charge past empty puts the bucket
   * in debt, a refund never fills it past full. Synchronous, so atomic.
   */
  settle(checks: SettleRequest['checks'], now: number): RateLimitDecision[] {
    return checks.map((check) => {
      const { limit } = check;
      // Refused at start-up (policies/settle.ts): a window has no refill to repay a debt with.
      const algorithm: string = limit.algorithm;
      if (algorithm !== 'token-bucket')
        throw new TypeError(`MemoryStore: settle is not supported for ${algorithm} limits`);
      const parts = partsOf(check);
      const tat = gcraSettle(
        this.buckets.read(parts) as number | undefined,
        now,
        limit,
        check.delta,
      );
      if (tat !== undefined) this.buckets.write(parts, tat, now);
      else this.buckets.delete(parts);
      return algorithmOf(limit).peek(tat, now, limit, 0);
    });
  }

  /** One check's block: its bucket full until `durationMs` from now (a token bucket's TAT moved, or a first-hit window). */
  block(
    check: BlockRequest['checks'][number],
    now: number,
    origin: number,
    unlessBlocked: boolean,
  ): RateLimitDecision {
    const { limit } = check;
    if (limit.algorithm === 'fixed-window' && limit.anchor === 'first-hit')
      return this.blockWindow(check, limit, now, origin, unlessBlocked);
    // Refused at start-up (resolve-limit.ts): a window has no refill to block.
    if (isWindowLimit(limit))
      throw new TypeError(`MemoryStore: block is not supported for ${limit.algorithm} limits`);
    const parts = partsOf(check);
    const held = this.buckets.read(parts) as number | undefined;
    if (unlessBlocked && this.serving(check.key, held, now))
      return algorithmOf(limit).peek(held, now, limit, 0);
    const tat = gcraBlock(held, now, limit, check.durationMs);
    if (tat !== held) {
      this.buckets.write(parts, tat, now);
      this.markBlock(check.key, tat, now + check.durationMs, now);
    }
    return algorithmOf(limit).peek(tat, now, limit, 0);
  }

  /**
   * A block on a window anchored at its first hit (the throttler compat
   * entry point): full until the block ends. Its mark is the window's end,
   * as a token bucket's is its TAT, for `unlessBlocked`.
   */
  private blockWindow(
    check: BlockRequest['checks'][number],
    limit: FixedWindowLimit,
    now: number,
    origin: number,
    unlessBlocked: boolean,
  ): RateLimitDecision {
    const parts = partsOf(check);
    const held = this.buckets.read(parts) as WindowState | undefined;
    if (unlessBlocked && held !== undefined && this.serving(check.key, held.end, now))
      return algorithmOf(limit).peek(held, now, limit, origin);
    const state = anchoredWindowBlock(now + origin, limit, check.durationMs);
    this.buckets.write(parts, state, now);
    this.markBlock(check.key, state.end, now + check.durationMs, now);
    return algorithmOf(limit).peek(state, now, limit, origin);
  }

  /** Whether any block was written and may still run (only then does eviction ask {@link blocking}). */
  get hasBlocks(): boolean {
    return this.blockMarks.size > 0;
  }

  /**
   * Whether `state`, held for `key`, is the block last written to it and that
   * block still runs: eviction keeps such a state over any other. Read only
   * (eviction asks about a few candidates; a stale mark goes with the next
   * block or `unlessBlocked` on its key, or with the oldest marks).
   */
  blocking(key: string, state: BucketState, now: number): boolean {
    const mark = this.blockMarks.get(key);
    return (
      mark !== undefined &&
      now < mark.end &&
      (typeof state === 'number' ? state : state.end) === mark.tat
    );
  }

  /** Whether the bucket `key` (holding `held`) still serves the block last written to it. */
  private serving(key: string, held: number | undefined, now: number): boolean {
    const mark = this.blockMarks.get(key);
    if (mark === undefined) return false;
    if (held === mark.tat && now < mark.end) return true;
    this.blockMarks.delete(key); // the bucket changed since (reset, refund, admission) or the block ended
    return false;
  }

  /**
   * Remember the block just written (its TAT and its end), in insertion
   * order: ended marks are dropped from the oldest end, and at `maxKeys`
   * marks the oldest goes (that key then loses only the tolerance of
   * retries near its block's end, never the block).
   */
  private markBlock(key: string, tat: number, end: number, now: number): void {
    const marks = this.blockMarks;
    marks.delete(key);
    for (const [oldest, mark] of marks) {
      if (mark.end > now && marks.size < this.maxKeys) break;
      marks.delete(oldest);
    }
    marks.set(key, { tat, end });
  }

  /** The bucket `key` was reset: its block, if any, is forgotten. */
  forget(key: string): void {
    this.blockMarks.delete(key);
  }

  clear(): void {
    this.blockMarks.clear();
  }
}

/** A check's key in its parts: as the module gives them, else split from the key (a store called directly). */
export function partsOf(ref: BucketRef): BucketKeyParts {
  return ref.namespace !== undefined && ref.identity !== undefined
    ? (ref as BucketKeyParts)
    : splitBucketKey(ref.key);
}
