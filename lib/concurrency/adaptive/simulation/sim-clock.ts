import type { ClockTimer, RateLimitClock } from '../../../clock.js';

interface Event {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

/**
 * A discrete-event clock: timers are events, and {@link runUntil} jumps from
 * one to the next, so that a minute of simulated traffic runs in
 * milliseconds. It is the module clock of a simulation (the adaptive limit's
 * backlog sets its waits on it).
 *
 * @internal
 */
export class SimClock implements RateLimitClock {
  private current = 0;
  private seq = 0;
  private readonly heap: Event[] = [];

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, callback: () => void): ClockTimer {
    const event: Event = {
      at: this.current + Math.max(0, delayMs),
      seq: this.seq++,
      run: callback,
      cancelled: false,
    };
    this.push(event);
    return { cancel: () => void (event.cancelled = true) };
  }

  /** Run every event due up to `end`, in time order (ties in the order set), then stand at `end`. */
  runUntil(end: number): void {
    while (this.heap.length > 0 && this.heap[0]!.at <= end) {
      const event = this.pop();
      this.current = Math.max(this.current, event.at);
      if (!event.cancelled) event.run();
    }
    this.current = Math.max(this.current, end);
  }

  private push(event: Event): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Event {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
