import { TOKEN_EPSILON } from '../../lib/algorithms/token-epsilon.js';
import type { RelativeTime } from '../../lib/store/relative-time.js';
import type { StoreLimit } from '../../lib/store/rate-limit-store.interface.js';
import type { RedisStore } from '../redis/index.js';

/** Tokens to hand back to Redis. */
interface GiveBack {
  readonly key: string;
  readonly limit: StoreLimit;
  readonly tokens: number;
}

/** Keys per give-back call. */
const GIVE_BACK_BATCH = 64;

/**
 * Unspent leased tokens on their way back to Redis: queued as leases are
 * released, sent in batches ({@link RedisStore.refund}, {@link GIVE_BACK_BATCH}
 * keys per call) at the next microtask or when the store flushes before a
 * call of its own, and counted: given back, or lost (Redis failing, or the
 * store running on its fallback, when nothing would take them).
 *
 * Never rejects: a failed give-back only counts its tokens as lost.
 *
 * @internal
 */
export class GiveBackQueue {
  /** Calls made to Redis. */
  calls = 0;
  /** Leases whose unspent tokens were given back. */
  returned = 0;
  /** Unspent tokens given back. */
  returnedTokens = 0;
  /** Unspent tokens that could not be given back. */
  lostTokens = 0;

  private queued: GiveBack[] = [];
  private scheduled = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  /**
   * @param redis where the tokens go back
   * @param time the store's relative frame: its last `now` dates the give-backs
   * @param fallback while it is active, tokens released are lost rather than queued
   */
  constructor(
    private readonly redis: RedisStore,
    private readonly time: RelativeTime,
    private readonly fallback: { readonly degraded: boolean },
  ) {}

  /** Queues `tokens` for the bucket `key` (a share of a token or less is dropped). */
  add(key: string, rate: number, burst: number, tokens: number): void {
    if (!(tokens > TOKEN_EPSILON)) return;
    if (this.fallback.degraded) {
      this.lostTokens += tokens;
      return;
    }
    this.queued.push({ key, limit: { algorithm: 'token-bucket', rate, burst }, tokens });
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  /** Sends what is queued now (batched): before a Redis call that must not count those tokens as taken. */
  flush(): void {
    this.scheduled = false;
    if (this.queued.length === 0) return;
    const queued = this.queued;
    this.queued = [];
    const now = this.time.lastNow;
    for (let start = 0; start < queued.length; start += GIVE_BACK_BATCH) {
      const batch = queued.slice(start, start + GIVE_BACK_BATCH);
      this.calls++;
      const sent = this.redis
        .refund({
          checks: batch.map(({ key, limit, tokens }) => ({ key, limit, cost: tokens })),
          now,
        })
        .then(
          () => {
            this.returned += batch.length;
            for (const item of batch) this.returnedTokens += item.tokens;
          },
          () => {
            for (const item of batch) this.lostTokens += item.tokens;
          },
        )
        .finally(() => this.inFlight.delete(sent));
      this.inFlight.add(sent);
    }
  }

  /** Counts a give-back made another way: with a pace (`RedisRoundTrip.releasePace`), or carried by a pace ask (`PaceAsk.giveBack`). */
  count(tokens: number, returned: boolean): void {
    if (!returned) {
      this.lostTokens += tokens;
      return;
    }
    this.returned++;
    this.returnedTokens += tokens;
  }

  /** Counts what is queued as lost: Redis stopped answering (give-backs to it would be lost anyway). */
  loseQueued(): void {
    for (const item of this.queued) this.lostTokens += item.tokens;
    this.queued = [];
  }

  /** Settles when every give-back sent so far is answered (or failed). */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight]);
  }
}
