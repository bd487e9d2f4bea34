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

  failed(error: unknown): void {
    if (this.failuresInBurst++ === 0) {
      this.logger.error(`Rate-limit store failed; applying failMode until it recovers: ${describe(error)}`);
    }
  }

  /** Cheap on the hot path: one comparison when nothing failed. */
  succeeded(): void {
    if (this.failuresInBurst === 0) return;
    this.logger.log(`Rate-limit store recovered after ${this.failuresInBurst} failed decision(s)`);
    this.failuresInBurst = 0;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
  return `${error.message}${cause}`;
}
