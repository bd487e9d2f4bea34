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
}

/** Wall-clock time, shared with other processes (and with Redis in client-time mode). */
export const systemClock: RateLimitClock = { now: () => Date.now() };

/**
 * A clock that only moves when told to: for tests and simulations.
 *
 * @publicApi
 */
export class ManualClock implements RateLimitClock {
  constructor(private current = 0) {}

  now(): number {
    return this.current;
  }

  /** Move forward (or backward, with a negative value) by `ms`. */
  advance(ms: number): void {
    this.current += ms;
  }

  set(ms: number): void {
    this.current = ms;
  }
}
