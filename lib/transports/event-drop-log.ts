/**
 * Refused events (`@EventPattern`), counted and said once per burst: nobody
 * waits for an event's answer, so the log is the only place a refusal shows.
 * The first refusal of a burst is said at once; the burst ends when its
 * retry time has passed (one `unref()`'d timer per burst, not per event), and
 * the count is said then.
 *
 * @internal
 */
export class EventDropLog {
  private readonly bursts = new Map<string, { dropped: number; timer: ReturnType<typeof setTimeout> }>();

  constructor(private readonly warn: (message: string) => void) {}

  /** An event of `handler` was refused by `limits`; `retryAfter` in seconds (`undefined`: waiting cannot help). */
  dropped(handler: string, limits: readonly string[], retryAfter: number | undefined): void {
    const burst = this.bursts.get(handler);
    if (burst) {
      burst.dropped++;
      return;
    }
    const names = limits.map((name) => `"${name}"`).join(', ') || 'its limit';
    this.warn(
      `RateLimit: ${handler}: refusing events over ${names}` +
        (retryAfter === undefined ? ' (their cost exceeds the burst)' : ` for the next ${retryAfter} s`) +
        '; the events refused meanwhile are counted and said when this burst ends.',
    );
    const timer = setTimeout(() => {
      const ended = this.bursts.get(handler);
      this.bursts.delete(handler);
      if (ended) this.warn(`RateLimit: ${handler}: ${ended.dropped} event(s) refused in all over ${names} in this burst.`);
    }, Math.max(1, retryAfter ?? 60) * 1000);
    timer.unref();
    this.bursts.set(handler, { dropped: 1, timer });
  }

  /** Say what the bursts still open have counted, and stop their timers (the module is shutting down). */
  flush(): void {
    for (const [handler, { dropped, timer }] of this.bursts) {
      clearTimeout(timer);
      this.warn(`RateLimit: ${handler}: ${dropped} event(s) refused in the last burst.`);
    }
    this.bursts.clear();
  }
}
