/**
 * Source of time for every decision, in milliseconds.
 *
 * Inject your own (`RateLimitModule.forRoot({ clock })`) to drive tests and
 * simulations by hand instead of sleeping. Time that goes backwards is clamped
 * by the algorithm, never refunded as tokens.
 *
 * @publicApi
 */
export interface RateLimitClock {
  now(): number;
  /**
   * Call `callback` once `delayMs` of this clock's time have passed (a
   * request waiting for its token under `maxDelay`, `RateLimiter.acquire`).
   * Optional: without it, waits use `setTimeout`, i.e. real time.
   */
  setTimer?(delayMs: number, callback: () => void): ClockTimer;
}

/** A timer set on a {@link RateLimitClock}. */
export interface ClockTimer {
  cancel(): void;
}

/** Real time: `setTimeout`, never keeping the process alive by itself. */
export function realTimer(delayMs: number, callback: () => void): ClockTimer {
  const timer = setTimeout(callback, Math.max(0, delayMs));
  timer.unref();
  return { cancel: () => clearTimeout(timer) };
}

/** Wall-clock time, shared with other processes (and with Redis in client-time mode). */
export const systemClock: RateLimitClock = { now: () => Date.now(), setTimer: realTimer };

/**
 * A clock that only moves when told to: for tests and simulations. Its
 * timers fire, in due order, when {@link advance} or {@link set} moves it
 * past their time.
 *
 * @publicApi
 */
export class ManualClock implements RateLimitClock {
  private timers: { at: number; seq: number; callback: () => void }[] = [];
  private seq = 0;

  constructor(private current = 0) {}

  now(): number {
    return this.current;
  }

  /** Move forward (or backward, with a negative value) by `ms`. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  set(ms: number): void {
    this.current = ms;
    this.fireDue();
  }

  setTimer(delayMs: number, callback: () => void): ClockTimer {
    const timer = { at: this.current + Math.max(0, delayMs), seq: this.seq++, callback };
    this.timers.push(timer);
    if (delayMs <= 0) queueMicrotask(() => this.fireDue());
    return { cancel: () => void (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  /** Timers not fired yet. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  private fireDue(): void {
    const due = this.timers
      .filter((timer) => timer.at <= this.current)
      .sort((a, b) => a.at - b.at || a.seq - b.seq);
    if (due.length === 0) return;
    this.timers = this.timers.filter((timer) => timer.at > this.current);
    for (const timer of due) timer.callback();
  }
}
