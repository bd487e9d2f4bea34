/** A call waiting for Redis, as {@link Deadlines} keeps it. */
export interface Waiting {
  /** `performance.now()` ms past which the call gives up. */
  readonly deadline: number;
  /** Called once, when the deadline has passed and the call is still waiting. */
  expire(): void;
}

/**
 * The deadlines of the calls waiting for Redis, on one store-wide timer
 * rather than one per call: a `setTimeout` and its `clearTimeout` cost more
 * than the rest of a call's own work in Node, at tens of thousands of calls
 * per second. Calls leave the set as soon as they are answered, so it only
 * ever holds the calls in flight; the timer is armed for the earliest
 * deadline among them (re-armed only when a call comes with an earlier one
 * than the armed time, which calls of one store's `timeoutMs`, arriving in
 * order, never do), is `unref()`'d, and is not re-armed when no call is waiting.
 *
 * When it fires, the expired calls are given up after the poll phase
 * (`setImmediate`): if the event loop was stalled past the deadline, a reply
 * may be sitting in the socket, and it should win over a timeout that is
 * only the stall's fault.
 */
export class Deadlines {
  private readonly waiting = new Set<Waiting>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer is due (`performance.now()` ms); +Infinity when none is. */
  private armedFor = Number.POSITIVE_INFINITY;

  /** Starts watching `call`: its `expire` runs once its deadline has passed, unless {@link remove}d first. */
  add(call: Waiting): void {
    this.waiting.add(call);
    if (call.deadline < this.armedFor) this.arm(call.deadline);
  }

  /** The call was answered (or given up): no longer watched. */
  remove(call: Waiting): void {
    this.waiting.delete(call);
  }

  private arm(deadline: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = deadline;
    this.timer = setTimeout(() => this.fired(), Math.max(1, Math.ceil(deadline - performance.now())));
    this.timer.unref();
  }

  private fired(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const firedAt = performance.now();
    setImmediate(() => this.sweep(firedAt));
  }

  /** Gives up the calls whose deadline had passed at `firedAt` and are still waiting; re-arms for the rest. */
  private sweep(firedAt: number): void {
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.waiting) {
      if (call.deadline <= firedAt) {
        this.waiting.delete(call);
        call.expire();
      } else if (call.deadline < next) {
        next = call.deadline;
      }
    }
    if (next < this.armedFor) this.arm(next);
  }
}
