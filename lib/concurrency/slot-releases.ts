import type { ConcurrencySlots } from '../store/concurrency-slots.interface.js';
import { isPromiseLike } from '../util/maybe-promise.js';

/** First retry of a failed release, then doubled after each failed retry, up to {@link MAX_RETRY_MS}. */
export const FIRST_RETRY_MS = 50;
/**
 * The longest wait between two retries: once the store answers again, a
 * pending release lands within this (plus the store's own timeout). Part of
 * the bound stated in docs/concurrency.md.
 */
export const MAX_RETRY_MS = 1000;
/** Releases kept for retrying at most; past that the newest failures are left to their leases. */
export const MAX_PENDING_RELEASES = 10_000;

/** One release still to land. */
interface Pending {
  readonly slots: ConcurrencySlots;
  readonly key: string;
  readonly id: string;
  readonly leaseMs: number;
  /** `performance.now()` past which it is dropped: the store's lease has freed the slot by then. */
  readonly until: number;
}

/** What {@link SlotReleases} reports, for the gate's burst logs. */
export interface SlotReleaseEvents {
  /** A release failed the first time (it is retried). */
  failed(error: unknown): void;
  /** Releases given up: their lease ran out, the queue was full, or the module shut down. */
  dropped(count: number, why: 'lease' | 'full' | 'shutdown'): void;
}

/**
 * Releases of concurrency slots that land even when the store fails for a
 * while. A release that fails (an error, or no answer within the store's
 * timeout) is retried, with a backoff from {@link FIRST_RETRY_MS} to
 * {@link MAX_RETRY_MS}, until it lands or the slot's lease has run out
 * since it was first tried (the store has freed it by then).
 *
 * Bounded work while the store is down: one timer (`unref()`'d: it never
 * keeps the process alive) for all of them, and each pass tries one release
 * first; only when that one lands are the others sent. At most
 * {@link MAX_PENDING_RELEASES} are kept. {@link close} drops them: shutdown
 * waits for none.
 *
 * @internal
 */
export class SlotReleases {
  private pending: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private delayMs = FIRST_RETRY_MS;
  private closed = false;

  constructor(
    private readonly now: () => number,
    private readonly events: SlotReleaseEvents,
  ) {}

  /** Releases waiting for a retry. */
  get size(): number {
    return this.pending.length;
  }

  /** Releases `id` of `key` now; if that fails, again later (see the class comment). Never throws. */
  release(slots: ConcurrencySlots, key: string, id: string, leaseMs: number): void {
    this.attempt(slots, key, id, leaseMs, (error) => {
      this.events.failed(error);
      this.queue({ slots, key, id, leaseMs, until: performance.now() + leaseMs });
    });
  }

  /** Module shutdown: nothing more is retried; what was pending is left to its lease. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const dropped = this.pending.length;
    this.pending = [];
    if (dropped > 0) this.events.dropped(dropped, 'shutdown');
  }

  /** One try; `onFailure` runs if it throws or rejects (never both an exception and a rejection unhandled). */
  private attempt(
    slots: ConcurrencySlots,
    key: string,
    id: string,
    leaseMs: number,
    onFailure: (error: unknown) => void,
    onSuccess?: () => void,
  ): void {
    try {
      const done = slots.release({ key, id, leaseMs, now: this.now() });
      if (isPromiseLike(done)) done.then(onSuccess, onFailure);
      else onSuccess?.();
    } catch (error) {
      onFailure(error);
    }
  }

  private queue(entry: Pending): void {
    if (this.closed) return this.events.dropped(1, 'shutdown');
    if (this.pending.length >= MAX_PENDING_RELEASES) return this.events.dropped(1, 'full');
    this.pending.push(entry);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed || this.pending.length === 0) return;
    this.timer = setTimeout(() => this.retry(), this.delayMs);
    this.timer.unref();
  }

  /** One pass: the leases run out dropped, one release tried, and the rest sent only if it landed. */
  private retry(): void {
    this.timer = undefined;
    const now = performance.now();
    const before = this.pending.length;
    this.pending = this.pending.filter((entry) => entry.until > now);
    if (this.pending.length < before) this.events.dropped(before - this.pending.length, 'lease');
    const probe = this.pending.shift();
    if (probe === undefined) return;
    const requeue = (entry: Pending) => () => this.queue(entry);
    this.attempt(
      probe.slots,
      probe.key,
      probe.id,
      probe.leaseMs,
      () => {
        // Still failing: wait longer, the probe first again.
        this.delayMs = Math.min(this.delayMs * 2, MAX_RETRY_MS);
        if (this.closed) return this.events.dropped(1, 'shutdown');
        this.pending.unshift(probe);
        this.schedule();
      },
      () => {
        this.delayMs = FIRST_RETRY_MS;
        for (const entry of this.pending.splice(0))
          this.attempt(entry.slots, entry.key, entry.id, entry.leaseMs, requeue(entry));
      },
    );
  }
}
