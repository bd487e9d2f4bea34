import { gcraConsume, gcraPeek, type RateLimitDecision } from '../../lib/algorithms/gcra.js';
import type {
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  RateLimitStore,
} from '../../lib/store/rate-limit-store.interface.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Hard cap on the number of buckets held. When a new bucket would exceed it,
   * the least recently charged bucket is evicted (and counted in
   * {@link MemoryStore.evictions}): that caller gets a full bucket again.
   * @default 1_000_000
   */
  readonly maxKeys?: number;
}

/** Entries examined by the incremental sweep on each decision. */
const SWEEP_STEP = 2;

/**
 * In-process store: one `Map` from bucket key to GCRA theoretical arrival time.
 *
 * - O(1) per decision, no timer at all (so nothing to `unref`, nothing pinning
 *   async contexts), one number per key.
 * - Exact cleanup: a bucket that is full again is indistinguishable from an
 *   absent one, so it is deleted. An incremental sweep walks the map a couple
 *   of entries per decision, so memory is reclaimed without ever pausing the
 *   event loop for a pass over all keys.
 * - Bounded: `maxKeys` is a hard cap. Charged buckets are moved to the end of
 *   the map's insertion order, so the first entry is always the least recently
 *   charged one, and that is the one evicted.
 *
 * Answers synchronously: the guard adds no promise on this path.
 *
 * @publicApi
 */
export class MemoryStore implements RateLimitStore {
  /** Bucket key → theoretical arrival time (ms). */
  private readonly buckets = new Map<string, number>();
  private readonly maxKeys: number;
  private sweepCursor: Iterator<string> = this.buckets.keys();
  private evicted = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const maxKeys = options.maxKeys ?? 1_000_000;
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
      throw new TypeError(`MemoryStore: maxKeys must be a positive integer, got ${String(options.maxKeys)}`);
    }
    this.maxKeys = maxKeys;
  }

  /** Buckets currently held (full buckets are dropped, so this is the number of callers being limited). */
  get size(): number {
    return this.buckets.size;
  }

  /** Buckets evicted because `maxKeys` was reached, since start. */
  get evictions(): number {
    return this.evicted;
  }

  consume(request: ConsumeRequest): ConsumeResult {
    const { checks, now } = request;
    this.sweep(now);
    if (checks.length === 1) {
      // The common case, without the bookkeeping of the all-or-nothing path.
      const check = checks[0]!;
      const outcome = gcraConsume(this.buckets.get(check.key), now, check, check.cost);
      if (outcome.decision.allowed) this.write(check.key, outcome.tat);
      return { allowed: outcome.decision.allowed, decisions: [outcome.decision] };
    }

    const tats: number[] = new Array(checks.length);
    const decisions: RateLimitDecision[] = new Array(checks.length);
    let allowed = true;
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      const outcome = gcraConsume(this.buckets.get(check.key), now, check, check.cost);
      tats[i] = outcome.tat;
      decisions[i] = outcome.decision;
      allowed &&= outcome.decision.allowed;
    }
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      if (allowed) this.write(check.key, tats[i]!);
      // Denied as a whole: the checks that would have admitted were not
      // charged, so report their bucket as it stands.
      else if (decisions[i]!.allowed) decisions[i] = gcraPeek(this.buckets.get(check.key), now, check);
    }
    return { allowed, decisions };
  }

  peek(request: BucketsRequest): ConsumeResult {
    const decisions = request.checks.map((check) => gcraPeek(this.buckets.get(check.key), request.now, check));
    return { allowed: true, decisions };
  }

  reset(request: BucketsRequest): void {
    for (const check of request.checks) this.buckets.delete(check.key);
  }

  close(): void {
    this.buckets.clear();
  }

  private write(key: string, tat: number): void {
    // delete + set moves the key to the end: insertion order = charge order.
    if (!this.buckets.delete(key) && this.buckets.size >= this.maxKeys) this.evictOldest();
    this.buckets.set(key, tat);
  }

  private evictOldest(): void {
    const oldest = this.buckets.keys().next();
    if (oldest.done) return;
    this.buckets.delete(oldest.value);
    this.evicted++;
  }

  /**
   * Examine the next few entries in insertion order and drop the full ones.
   * A live Map iterator survives deletions, so the cursor is kept between
   * calls and restarted when it reaches the end.
   */
  private sweep(now: number): void {
    for (let step = 0; step < SWEEP_STEP; step++) {
      let next = this.sweepCursor.next();
      if (next.done) {
        if (this.buckets.size === 0) return;
        this.sweepCursor = this.buckets.keys();
        next = this.sweepCursor.next();
        if (next.done) return;
      }
      const tat = this.buckets.get(next.value);
      if (tat !== undefined && tat <= now) this.buckets.delete(next.value);
    }
  }
}
