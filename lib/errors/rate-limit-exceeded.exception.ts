import { HttpException, HttpStatus } from '@nestjs/common';
import type { RateLimitDecision } from '../algorithms/gcra.js';
import { denialBody } from './denial-body.js';
import type { HeaderLimit } from '../headers/rate-limit-headers.js';
import type { ErrorFormat } from '../interfaces/rate-limit-module-options.interface.js';

/** What else a {@link RateLimitExceededException} carries, for its response. */
export interface RateLimitExceededDetails {
  /**
   * The limits `decisions` belong to (same order): with them, the response
   * carries the rate-limit headers. Without them, only `Retry-After`.
   */
  readonly limits?: readonly HeaderLimit[];
  /** The body's shape. @default 'nest' */
  readonly errorFormat?: ErrorFormat;
}

/**
 * A request over a limit: HTTP 429. Thrown by `RateLimitGuard` on HTTP
 * routes and by `RateLimiter.enforce()` anywhere.
 *
 * The body is `{ statusCode: 429, message, retryAfter }` (`retryAfter` in
 * seconds, `null` when waiting cannot help because the request costs more
 * than the burst), or an `application/problem+json` problem with the
 * module's `errorFormat: 'problem+json'`. The module's exception filter adds
 * `Retry-After` and, when the exception knows its limits, the rate-limit
 * headers: what the guard's own 429 carries.
 *
 * @publicApi
 */
export class RateLimitExceededException extends HttpException {
  /** The limits the decisions belong to (empty when the thrower did not say). */
  readonly limits: readonly HeaderLimit[];
  readonly errorFormat: ErrorFormat;

  constructor(
    /** Seconds until the request could succeed, as sent in `Retry-After`. */
    readonly retryAfter: number | undefined,
    /** The decisions of every limit that applied, in declaration order. */
    readonly decisions: readonly RateLimitDecision[] = [],
    message = 'Too Many Requests',
    details: RateLimitExceededDetails = {},
  ) {
    const limits = details.limits ?? [];
    const errorFormat = details.errorFormat ?? 'nest';
    const violated = limits
      .filter((_, i) => decisions[i]?.allowed === false)
      .map((limit) => limit.name);
    super(denialBody(errorFormat, { retryAfter, message, violated }), HttpStatus.TOO_MANY_REQUESTS);
    this.limits = limits;
    this.errorFormat = errorFormat;
  }
}
