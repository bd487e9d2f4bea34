/** A call waiting for Redis, as {@link Deadlines} keeps it. */
export interface Waiting {
  /** `performance.now()` ms past which the call gives up. */
  readonly deadline: number;
  /** Called once, when the deadline has passed and the call is still waiting. */
  expire(): void;
  /** Links of the list of waiting calls ({@link Deadlines}' own; start them `undefined`). */
  previous?: Waiting | undefined;
  next?: Waiting | undefined;
}

/**
 * The deadlines of the calls waiting for Redis, on one store-wide timer
 * rather than one per call: a `setTimeout` and its `clearTimeout` cost more
 * than the rest of a call's own work in Node, at tens of thousands of calls
 * per second. The calls are linked in a list through their own fields (no
 * hashing, no allocation: a `Set` cost 2 % of Node's time on cold keys), and
 * leave it as soon as they are answered, so it only ever holds the calls in
 * flight; the timer is armed for the earliest
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
  /** Oldest waiting call; calls are appended, and unlinked when answered or expired. */
  private first: Waiting | undefined;
  private last: Waiting | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer is due (`performance.now()` ms); +Infinity when none is. */
  private armedFor = Number.POSITIVE_INFINITY;

  /** Starts watching `call`: its `expire` runs once its deadline has passed, unless {@link remove}d first. */
  add(call: Waiting): void {
    call.previous = this.last;
    call.next = undefined;
    if (this.last === undefined) this.first = call;
    else this.last.next = call;
    this.last = call;
    if (call.deadline < this.armedFor) this.arm(call.deadline);
  }

  /** The call was answered (or given up): no longer watched. Removing a call not watched does nothing. */
  remove(call: Waiting): void {
    const { previous, next } = call;
    if (previous === undefined && this.first !== call) return;
    if (previous === undefined) this.first = next;
    else previous.next = next;
    if (next === undefined) this.last = previous;
    else next.previous = previous;
    call.previous = call.next = undefined;
  }

  private arm(deadline: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = deadline;
    this.timer = setTimeout(
      () => this.fired(),
      Math.max(1, Math.ceil(deadline - performance.now())),
    );
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
    let nextDeadline = Number.POSITIVE_INFINITY;
    for (let call = this.first; call !== undefined;) {
      const following = call.next;
      if (call.deadline <= firedAt) {
        this.remove(call);
        call.expire();
      } else if (call.deadline < nextDeadline) {
        nextDeadline = call.deadline;
      }
      call = following;
    }
    if (nextDeadline < this.armedFor) this.arm(nextDeadline);
  }
}
