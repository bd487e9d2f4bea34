import type { ClockTimer, RateLimitClock } from '../../clock.js';
import { realTimer } from '../../clock.js';

/** How many requests may wait at once, per process, before new ones are refused. */
export const MAX_WAITING = 10_000;

interface Waiter {
  readonly at: number;
  readonly seq: number;
  resolve: (() => void) | undefined;
}

/** A wait handed out by {@link WaitQueue.wait}. */
export interface Wait {
  /** Resolves when the wait is over (never rejects). */
  readonly done: Promise<void>;
  /** Stop waiting: `done` never resolves, the slot is freed. */
  cancel(): void;
}

/**
 * Requests waiting for their reserved token: one timer for the whole queue
 * (armed for the earliest), not one per request; due in the order of their
 * times, ties in arrival order. Bounded: past {@link MAX_WAITING} waiting
 * requests, {@link wait} answers `undefined` and the caller refuses.
 */
export class WaitQueue {
  private readonly heap: Waiter[] = [];
  private seq = 0;
  private waiting = 0;
  private timer: ClockTimer | undefined;
  private armedAt = Infinity;

  constructor(
    private readonly clock: RateLimitClock,
    private readonly capacity = MAX_WAITING,
  ) {}

  /** Requests waiting now. */
  get size(): number {
    return this.waiting;
  }

  /** Wait `delayMs` of the clock's time; `undefined` when the queue is full. */
  wait(delayMs: number): Wait | undefined {
    if (this.waiting >= this.capacity) return undefined;
    // Cancelled waiters stay in the heap until their time; never more of them than live ones.
    if (this.heap.length >= 2 * this.capacity) this.compact();
    const waiter: Waiter = { at: this.clock.now() + delayMs, seq: this.seq++, resolve: undefined };
    const done = new Promise<void>((resolve) => (waiter.resolve = resolve));
    this.push(waiter);
    this.waiting++;
    this.arm();
    return {
      done,
      cancel: () => {
        if (waiter.resolve === undefined) return;
        waiter.resolve = undefined; // left in the heap, skipped when it comes up
        this.waiting--;
      },
    };
  }

  /** Release every waiter now (module shutdown: nobody is left hanging). */
  drain(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.armedAt = Infinity;
    for (const waiter of this.heap.splice(0)) this.release(waiter);
  }

  private compact(): void {
    const live = this.heap.filter((waiter) => waiter.resolve !== undefined);
    this.heap.length = 0;
    for (const waiter of live) this.push(waiter);
  }

  private arm(): void {
    const first = this.heap[0];
    if (first === undefined || first.at >= this.armedAt) return;
    this.timer?.cancel();
    this.armedAt = first.at;
    const delay = first.at - this.clock.now();
    this.timer = (this.clock.setTimer ?? realTimer).call(this.clock, delay, () => this.fire());
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.clock.now();
    while (this.heap.length > 0 && this.heap[0]!.at <= now) this.release(this.pop()!);
    this.arm();
  }

  private release(waiter: Waiter): void {
    const resolve = waiter.resolve;
    if (resolve === undefined) return;
    waiter.resolve = undefined;
    this.waiting--;
    resolve();
  }

  private push(waiter: Waiter): void {
    const heap = this.heap;
    let i = heap.push(waiter) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Waiter | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return top;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

function before(a: Waiter, b: Waiter): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
