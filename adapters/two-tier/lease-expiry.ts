import type { GiveBackQueue } from './give-back-queue.js';
import { givesBackAtClose, holds } from './key-state.js';
import type { KeyTable } from './key-table.js';

/**
 * The store-wide lease expiry timer: while any key holds tokens, every
 * `leaseTtlMs / 2` it expires what no request touched since its time
 * (`KeyTable.expire`: given back, or in a fleet owed to the key's next call;
 * requests and the sweep expire the others), and it stops once nothing is
 * held. One timer per store, `unref()`'d, none per key.
 *
 * @internal
 */
export class LeaseExpiry {
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    private readonly keys: KeyTable,
    private readonly giveBacks: GiveBackQueue,
    private readonly clock: { now(): number },
    private readonly leaseTtlMs: number,
  ) {}

  /** Runs the timer (a lease was granted); nothing if it runs already, or once closed. */
  start(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => this.expire(), Math.max(10, this.leaseTtlMs / 2));
    this.timer.unref();
  }

  /** Stops the timer for good (at close). */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private expire(): void {
    const clockNow = this.clock.now();
    const { leased } = this.keys;
    for (const key of leased) {
      const state = this.keys.get(key);
      if (state === undefined || !givesBackAtClose(state)) leased.delete(key);
      else if (holds(state) && clockNow >= state.leaseExpiresAt) this.keys.expire(key, state);
    }
    this.giveBacks.flush();
    if (leased.size === 0) this.stop();
  }
}
