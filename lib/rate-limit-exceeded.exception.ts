import { HttpException, HttpStatus } from '@nestjs/common';
import type { RateLimitDecision } from './algorithms/gcra.js';

/**
 * Thrown by `RateLimitGuard` when a request is over a limit: HTTP 429 with
 * body `{ statusCode: 429, message, retryAfter }` (`retryAfter` in seconds,
 * `null` when waiting cannot help because the request costs more than the burst).
 *
 * @publicApi
 */
export class RateLimitExceededException extends HttpException {
  constructor(
    /** Seconds until the request could succeed, as sent in `Retry-After`. */
    readonly retryAfter: number | undefined,
    /** The decisions of every limit that applied, in declaration order. */
    readonly decisions: readonly RateLimitDecision[] = [],
    message = 'Too Many Requests',
  ) {
    super({ statusCode: HttpStatus.TOO_MANY_REQUESTS, message, retryAfter: retryAfter ?? null }, HttpStatus.TOO_MANY_REQUESTS);
  }
}
