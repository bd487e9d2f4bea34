import type { ClockTimer, RateLimitClock } from '../../clock.js';
import { realTimer } from '../../clock.js';

/** How many requests may wait at once, per process, before new ones are refused. */
export const MAX_WAITING = 10_000;

/**
 * How many requests of one bucket key may wait at once, per process: a
 * hundredth of {@link MAX_WAITING}, so that one caller's flood holds at most
 * 1% of the queue and it takes 100 keys waiting at the cap to fill it (issue
 * 26: 34 keys filled it, and every other caller who had to wait was
 * refused). A key reaches it only when its reservation allows more than 100
 * waiting requests (rate × maxDelay / cost > 100: 10/s with a 10 s maxDelay,
 * 100/s with 1 s); a burst smoothed by `maxDelay` (the README's 20 webhooks)
 * is far below it. Past it the key's requests are refused like those beyond
 * `maxDelay`, with Retry-After.
 */
export const MAX_WAITING_PER_KEY = 100;

interface Waiter {
  readonly at: number;
  readonly seq: number;
  /** The bucket key it waits for (counted against {@link MAX_WAITING_PER_KEY}). */
  readonly key: string | undefined;
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
 * requests, or {@link MAX_WAITING_PER_KEY} of one key, {@link wait} answers
 * `undefined` and the caller refuses.
 */
export class WaitQueue {
  private readonly heap: Waiter[] = [];
  private seq = 0;
  private waiting = 0;
  /** Waiting requests by key (keys with none are deleted). */
  private readonly byKey = new Map<string, number>();
  private timer: ClockTimer | undefined;
  private armedAt = Infinity;

  constructor(
    private readonly clock: RateLimitClock,
    private readonly capacity = MAX_WAITING,
    private readonly perKey = MAX_WAITING_PER_KEY,
  ) {}

  /** Requests waiting now. */
  get size(): number {
    return this.waiting;
  }

  /** Requests of `key` waiting now. */
  waitingFor(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  /** Whether a refusal now is the key's cap rather than the whole queue's. */
  fullFor(key: string | undefined): 'queue' | 'key' | undefined {
    if (this.waiting >= this.capacity) return 'queue';
    if (key !== undefined && this.waitingFor(key) >= this.perKey) return 'key';
    return undefined;
  }

  /**
   * Wait `delayMs` of the clock's time for `key`'s token; `undefined` when
   * the queue is full, or `key` has its share of it.
   */
  wait(delayMs: number, key?: string): Wait | undefined {
    if (this.fullFor(key) !== undefined) return undefined;
    // Cancelled waiters stay in the heap until their time; never more of them than live ones.
    if (this.heap.length >= 2 * this.capacity) this.compact();
    const waiter: Waiter = {
      at: this.clock.now() + delayMs,
      seq: this.seq++,
      key,
      resolve: undefined,
    };
    const done = new Promise<void>((resolve) => (waiter.resolve = resolve));
    this.push(waiter);
    this.waiting++;
    if (key !== undefined) this.byKey.set(key, this.waitingFor(key) + 1);
    this.arm();
    return {
      done,
      cancel: () => {
        if (waiter.resolve === undefined) return;
        waiter.resolve = undefined; // left in the heap, skipped when it comes up
        this.left(waiter);
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
    this.left(waiter);
    resolve();
  }

  /** A waiter stopped waiting (released or cancelled): its place, and its key's, are free. */
  private left(waiter: Waiter): void {
    this.waiting--;
    const key = waiter.key;
    if (key === undefined) return;
    const count = this.waitingFor(key) - 1;
    if (count > 0) this.byKey.set(key, count);
    else this.byKey.delete(key);
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
