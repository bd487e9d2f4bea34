import { SetMetadata } from '@nestjs/common';
import { SKIP_RATE_LIMIT_METADATA } from '../rate-limit.constants.js';

/**
 * Skip rate limiting on a controller or a route: all limits, or only the named ones.
 *
 * @example
 * ```ts
 * @SkipRateLimit()           // no limit at all
 * @SkipRateLimit('search')   // every limit but "search"
 * ```
 * @publicApi
 */
export function SkipRateLimit(...names: string[]): ClassDecorator & MethodDecorator {
  return SetMetadata(SKIP_RATE_LIMIT_METADATA, names.length === 0 ? true : names);
}
