import { RateLimitStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  ConcurrencySlots,
  SlotAcquireRequest,
  SlotAcquireResult,
  SlotReleaseRequest,
} from '../../lib/store/concurrency-slots.interface.js';
import { MapCursor } from '../../lib/store/map-cursor.js';

/** Keys the incremental sweep examines per acquisition. */
const SWEEP_STEP = 2;

/**
 * `MemoryStore`'s concurrency slots: key → (slot id → lease expiry).
 *
 * - Never leaks: a released slot is deleted at once, and a key with no slot
 *   left with it; a slot never released (a bug, a request the interceptor
 *   never saw end) expires after its lease, reclaimed when its key is next
 *   asked for or by an incremental sweep of a couple of keys per acquisition.
 * - Bounded: at most `maxSlots` slots held in all (the store's `maxKeys`);
 *   beyond that an acquisition fails like a store (the limit's `failMode`
 *   decides), rather than evicting a slot some request still holds.
 * - One limit's slots share one lease length, so insertion order is expiry
 *   order: expiring a key's slots stops at the first live one.
 *
 * @internal
 */
export class MemorySlots implements ConcurrencySlots {
  private readonly keys = new Map<string, Map<string, number>>();
  private readonly cursor = new MapCursor(this.keys);
  private held = 0;

  constructor(private readonly maxSlots: number) {}

  /** Slots held in all (expired ones not yet reclaimed included). */
  get size(): number {
    return this.held;
  }

  acquire(request: SlotAcquireRequest): SlotAcquireResult {
    const { key, now } = request;
    this.sweep(now);
    let slots = this.keys.get(key);
    if (slots !== undefined) this.expire(key, slots, now);
    const inFlight = slots?.size ?? 0;
    if (inFlight >= request.limit) return { allowed: false, inFlight };
    if (this.held >= this.maxSlots) {
      throw new RateLimitStoreError(
        `MemoryStore: ${this.held} concurrency slots are held, the most this store keeps (maxKeys)`,
      );
    }
    if (slots === undefined || slots.size === 0) {
      slots = new Map();
      this.keys.set(key, slots);
      this.cursor.inserted();
    }
    slots.set(request.id, now + request.leaseMs);
    this.held++;
    return { allowed: true, inFlight: inFlight + 1 };
  }

  release(request: SlotReleaseRequest): void {
    const slots = this.keys.get(request.key);
    if (slots === undefined || !slots.delete(request.id)) return;
    this.held--;
    if (slots.size === 0) this.keys.delete(request.key);
  }

  inFlight(key: string, now: number): number {
    const slots = this.keys.get(key);
    if (slots === undefined) return 0;
    this.expire(key, slots, now);
    return slots.size;
  }

  clear(): void {
    this.keys.clear();
    this.cursor.restart();
    this.held = 0;
  }

  private expire(key: string, slots: Map<string, number>, now: number): void {
    for (const [id, expiry] of slots) {
      if (expiry > now) break;
      slots.delete(id);
      this.held--;
    }
    if (slots.size === 0) this.keys.delete(key);
  }

  private sweep(now: number): void {
    for (let i = 0; i < SWEEP_STEP; i++) {
      const key = this.cursor.next();
      if (key === undefined) return;
      const slots = this.keys.get(key);
      if (slots !== undefined) this.expire(key, slots, now);
    }
  }
}
