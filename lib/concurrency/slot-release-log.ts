import { BurstLog } from '../observability/burst-log.js';

/**
 * What `SlotGate` says of its releases: a release that failed (it is retried)
 * and releases given up, each once per burst, the burst's count when it ends.
 * Never a line per call: the number of lines is bounded by the bursts.
 *
 * @internal
 */
export class SlotReleaseLog {
  private readonly log: BurstLog;

  constructor(warn: ConstructorParameters<typeof BurstLog>[0]) {
    this.log = new BurstLog(warn);
  }

  failed(error: unknown): void {
    const why = error instanceof Error ? error.message : String(error);
    this.log.occurred('release', 60_000, () => ({
      first: `RateLimit: a concurrency slot could not be released (${why}); retried until the store answers (at most until its lease runs out). Later failures are counted and said when this burst ends.`,
      summary: (count) =>
        `RateLimit: ${count} concurrency slot release(s) failed in the last burst and were retried.`,
    }));
  }

  dropped(count: number, why: 'lease' | 'full' | 'shutdown'): void {
    const reason =
      why === 'lease'
        ? 'their leases ran out while the store kept failing'
        : why === 'full'
          ? 'too many releases were already waiting'
          : 'the module shut down';
    this.log.occurred(`dropped:${why}`, 60_000, () => ({
      first: `RateLimit: ${count} concurrency slot release(s) given up (${reason}); their leases free the slots. Later ones are counted and said when this burst ends.`,
      summary: (times) =>
        `RateLimit: concurrency slot releases were given up ${times} time(s) in the last burst (${reason}).`,
    }));
  }

  /** Module shutdown: the counts of the open bursts are said. */
  flush(): void {
    this.log.flush();
  }
}
