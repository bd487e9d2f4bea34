import type { HeaderSource } from './headers/write-headers.js';

/**
 * Where the guard leaves the headers for `RateLimitInterceptor` on routes
 * where the interceptor writes them. A symbol: invisible to application code
 * and to serialisers.
 *
 * @internal
 */
export const RATE_LIMIT_HEADERS: unique symbol = Symbol('RATE_LIMIT:HEADERS');

/** @internal */
export interface RequestWithRateLimit {
  [RATE_LIMIT_HEADERS]?: HeaderSource;
}
