import { Logger } from '@nestjs/common';

/** A minute: the window over which the failure lines are counted. */
const WINDOW_MS = 60_000;
/** Outages announced one by one per window; past that, counted and said at the window's end. */
const ANNOUNCED_PER_WINDOW = 3;

/**
 * Logs store failures once per burst rather than once per request: the first
 * failure after a healthy period is logged with its cause, the rest are
 * counted, and the recovery is logged with the count.
 *
 * A store that fails and recovers call after call (Redis out of memory or a
 * read-only replica: a denial that only reads succeeds, a call that must
 * write fails, and callers choose which they send) would make every call a
 * burst of its own, two lines each. So at most {@link ANNOUNCED_PER_WINDOW}
 * bursts are announced per minute; the failed decisions of later ones are
 * counted and said in one line when that minute ends (one `unref()`'d timer),
 * or at shutdown ({@link close}).
 *
 * @internal
 */
export class StoreFailureLog {
  private failuresInBurst = 0;
  /** This burst's first failure was logged (so its recovery is too). */
  private announced = false;
  private windowStart = Number.NEGATIVE_INFINITY;
  private announcedInWindow = 0;
  /** Failed decisions of bursts not announced, not said yet. */
  private unsaid = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly logger = new Logger('RateLimit'),
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** @returns the failures in a row, this one included (1: the first of an outage). */
  failed(error: unknown): number {
    if (this.failuresInBurst++ === 0) {
      const now = this.now();
      if (now - this.windowStart >= WINDOW_MS) {
        this.windowStart = now;
        this.announcedInWindow = 0;
      }
      this.announced = this.announcedInWindow < ANNOUNCED_PER_WINDOW;
      if (this.announced) {
        this.announcedInWindow++;
        this.logger.error(
          `Rate-limit store failed; applying failMode until it recovers: ${describe(error)}`,
        );
      } else this.sayAtWindowEnd(now);
    }
    if (!this.announced) this.unsaid++;
    return this.failuresInBurst;
  }

  /**
   * Cheap on the hot path: one comparison when nothing failed.
   * @returns the failures this success ends (0: there were none).
   */
  succeeded(): number {
    const failures = this.failuresInBurst;
    if (failures === 0) return 0;
    if (this.announced)
      this.logger.log(`Rate-limit store recovered after ${failures} failed decision(s)`);
    this.failuresInBurst = 0;
    return failures;
  }

  /** Says what is counted and not said yet, and stops the timer (the module is shutting down). */
  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.sayUnsaid();
  }

  private sayAtWindowEnd(now: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.sayUnsaid();
      },
      Math.max(1, this.windowStart + WINDOW_MS - now),
    );
    this.timer.unref();
  }

  private sayUnsaid(): void {
    if (this.unsaid === 0) return;
    this.logger.error(
      `Rate-limit store failed ${this.unsaid} more decision(s) in outages that came and went (more than ${ANNOUNCED_PER_WINDOW} in a minute, not logged one by one); failMode was applied to each`,
    );
    this.unsaid = 0;
    // A burst still open is from now on a known one: its recovery is said.
    if (this.failuresInBurst > 0) this.announced = true;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
  return `${error.message}${cause}`;
}
