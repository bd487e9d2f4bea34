/** Metadata key of `@RateLimit()` limits on a class or handler. @internal */
export const RATE_LIMIT_METADATA = 'RATE_LIMIT:LIMITS';
/** Metadata key of `@SkipRateLimit()` on a class or handler. @internal */
export const SKIP_RATE_LIMIT_METADATA = 'RATE_LIMIT:SKIP';
/** Injection token of the module clock ({@link RateLimitClock}). */
export const RATE_LIMIT_CLOCK = 'RATE_LIMIT:CLOCK';
/** Injection token of the store ({@link RateLimitStore}). */
export const RATE_LIMIT_STORE = 'RATE_LIMIT:STORE';
/** Injection token of the validated module options (`ResolvedModuleOptions`). @internal */
export const RESOLVED_RATE_LIMIT_OPTIONS = 'RATE_LIMIT:RESOLVED_OPTIONS';
/** Injection token of the module instance's identity (`RateLimitOwner`), which scopes channel messages. @internal */
export const RATE_LIMIT_OWNER = 'RATE_LIMIT:OWNER';
/** Name of limits declared without one. */
export const DEFAULT_LIMIT_NAME = 'default';
/**
 * Static brand of `RateLimitInterceptor`, so route compilation can recognise
 * it in `@UseInterceptors()` metadata without importing it (which would be an
 * import cycle). @internal
 */
export const RATE_LIMIT_INTERCEPTOR_BRAND: unique symbol = Symbol.for(
  'nestjs-holdup:RateLimitInterceptor',
);
/** Static brand of `RateLimitGuard` (and its subclasses), recognised in `@UseGuards()` metadata and global guards. @internal */
export const RATE_LIMIT_GUARD_BRAND: unique symbol = Symbol.for('nestjs-holdup:RateLimitGuard');
