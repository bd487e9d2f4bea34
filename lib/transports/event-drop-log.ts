import { BurstLog } from '../observability/burst-log.js';

/**
 * Refused events (`@EventPattern`), counted and said once per burst: nobody
 * waits for an event's answer, so the log is the only place a refusal shows.
 * The burst ends when its retry time has passed.
 *
 * @internal
 */
export class EventDropLog {
  private readonly log: BurstLog;

  constructor(warn: (message: string) => void) {
    this.log = new BurstLog(warn);
  }

  /** An event of `handler` was refused by `limits`; `retryAfter` in seconds (`undefined`: waiting cannot help). */
  dropped(handler: string, limits: readonly string[], retryAfter: number | undefined): void {
    this.log.occurred(handler, (retryAfter ?? 60) * 1000, () => {
      const names = limits.map((name) => `"${name}"`).join(', ') || 'its limit';
      return {
        first:
          `RateLimit: ${handler}: refusing events over ${names}` +
          (retryAfter === undefined
            ? ' (their cost exceeds the burst)'
            : ` for the next ${retryAfter} s`) +
          '; the events refused meanwhile are counted and said when this burst ends.',
        summary: (count) =>
          `RateLimit: ${handler}: ${count} event(s) refused in the last burst over ${names}.`,
      };
    });
  }

  /** Say what the bursts still open have counted (the module is shutting down). */
  flush(): void {
    this.log.flush();
  }
}
