import { IntrinsicException } from '@nestjs/common';

/**
 * A call the limit cannot tell apart from other callers (no client address,
 * no connection): refused, never put in one bucket with everybody else. The
 * module says why once per limit in its log; the error itself is an
 * `IntrinsicException`, so Nest does not log it again for every call (the
 * caller gets the transport's "Internal server error").
 *
 * @publicApi
 */
export class RateLimitKeyError extends IntrinsicException {
  override readonly name = 'RateLimitKeyError';
}
