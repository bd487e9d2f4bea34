import { Logger } from '@nestjs/common';

/**
 * Logs store failures once per burst rather than once per request: the first
 * failure after a healthy period is logged with its cause, the rest are
 * counted, and the recovery is logged with the count.
 *
 * @internal
 */
export class StoreFailureLog {
  private failuresInBurst = 0;

  constructor(private readonly logger = new Logger('RateLimit')) {}

  /** @returns the failures in a row, this one included (1: the first of an outage). */
  failed(error: unknown): number {
    if (this.failuresInBurst++ === 0) {
      this.logger.error(
        `Rate-limit store failed; applying failMode until it recovers: ${describe(error)}`,
      );
    }
    return this.failuresInBurst;
  }

  /**
   * Cheap on the hot path: one comparison when nothing failed.
   * @returns the failures this success ends (0: there were none).
   */
  succeeded(): number {
    const failures = this.failuresInBurst;
    if (failures === 0) return 0;
    this.logger.log(`Rate-limit store recovered after ${failures} failed decision(s)`);
    this.failuresInBurst = 0;
    return failures;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
  return `${error.message}${cause}`;
}
