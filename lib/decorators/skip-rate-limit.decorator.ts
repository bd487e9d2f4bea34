import { SKIP_RATE_LIMIT_METADATA } from '../rate-limit.constants.js';

/**
 * Skip rate limiting on a controller or a route: all limits, or only the named ones.
 * Stacked decorators add up (`@SkipRateLimit('a') @SkipRateLimit('b')` skips both).
 *
 * @example
 * ```ts
 * @SkipRateLimit()           // no limit at all
 * @SkipRateLimit('search')   // every limit but "search"
 * ```
 * @publicApi
 */
export function SkipRateLimit(...names: string[]): ClassDecorator & MethodDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const where = descriptor ? descriptor.value : target;
    const existing: true | string[] | undefined = Reflect.getMetadata(
      SKIP_RATE_LIMIT_METADATA,
      where,
    );
    const skip = existing === true || names.length === 0 ? true : [...(existing ?? []), ...names];
    Reflect.defineMetadata(SKIP_RATE_LIMIT_METADATA, skip, where);
  };
}
