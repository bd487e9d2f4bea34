// `nestjs-holdup`: what an application uses (the types it rarely writes: the
// `RateLimitTypes` namespace at the end). Custom stores: `nestjs-holdup/store`
// (and `nestjs-holdup/algorithms`); diagnostics-channel payloads:
// `nestjs-holdup/observability`; the AIMD engine: `nestjs-holdup/adaptive`.
// Every runtime helper here is a value export (usable at run time), types are
// `type` exports. Each name is re-exported from the file that declares it.

// Nest module, tokens
export { RateLimitModule } from './rate-limit.module.js';
export { RATE_LIMIT_MODULE_OPTIONS } from './rate-limit.module-definition.js';
export { RATE_LIMIT_CLOCK, RATE_LIMIT_STORE, DEFAULT_LIMIT_NAME } from './rate-limit.constants.js';

// Decorators, guard, interceptor, programmatic limiter
export { RateLimit } from './decorators/rate-limit.decorator.js';
export { SkipRateLimit } from './decorators/skip-rate-limit.decorator.js';
export { RateLimitGuard, type RateLimitStoreFailure } from './rate-limit.guard.js';
export { RateLimitInterceptor } from './rate-limit.interceptor.js';
export {
  RateLimiter,
  type ProgrammaticLimit,
  type RateLimitReservation,
} from './rate-limiter.service.js';
export type { AcquireOptions } from './policies/delay/acquire-options.js';
export type { RateLimitDecision } from './algorithms/rate-limit-decision.js';
export type { HotKey, HottestKeysQuery } from './observability/hot-keys/hot-keys.js';

// Exceptions and errors
export {
  RateLimitExceededException,
  type RateLimitExceededDetails,
} from './errors/rate-limit-exceeded.exception.js';
export { RateLimitExceptionFilter } from './rate-limit-exception.filter.js';
export { QUOTA_EXCEEDED_TYPE } from './errors/denial-body.js';
export { RateLimitStoreError } from './errors/rate-limit-store.error.js';
export { RateLimitKeyError } from './errors/rate-limit-key.error.js';
export { RateLimitValueError } from './policies/dynamic-limit.js';
export { RateLimitGraphqlError } from './transports/graphql.transport.js';

// Keys: the client address as the module sees it, for key functions
export { clientAddress } from './keys/client-address-helper.js';
// Rates: '100/min' and the like as tokens per second (undefined when not a rate)
export { parseRate } from './limits/parse-rate.js';

// Options (the types of their fields, and the kinds `RateLimitOptions` is a
// union of: the `RateLimitTypes` namespace below)
export type {
  RateLimitOptions,
  Rate,
  KeyStrategy,
  FailMode,
  ChargeMode,
  RateLimitOutcome,
} from './interfaces/rate-limit-options.interface.js';
export type {
  RateLimitModuleOptions,
  RateLimitOptionsFactory,
} from './interfaces/rate-limit-module-options.interface.js';

// Transports (what the guard's protected hooks are given)
export type {
  RateLimitTransport,
  RequestResponse,
  RateLimitDenial,
} from './transports/rate-limit-transport.interface.js';

// Adaptive limits as an application meets them (the AIMD engine: `nestjs-holdup/adaptive`)
export type { AdaptiveOptions } from './interfaces/adaptive-options.interface.js';
export { AdaptiveRateProvider } from './adaptive/adaptive-rate.provider.js';

// Events for application code (docs/events-and-health.md); the payload types
// are `RateLimitEventMap['denied']`, ..., also named in `RateLimitTypes`
export { RateLimitEvents } from './observability/events/rate-limit-events.js';
export type { RateLimitEventMap } from './observability/events/rate-limit-events.interface.js';

// Clock, stores: the `store` option's type (implementing one: `nestjs-holdup/store`), the default store
export { ManualClock, systemClock, type RateLimitClock } from './clock.js';
export type { RateLimitStore } from './store/rate-limit-store.interface.js';
export { MemoryStore, type MemoryStoreOptions } from '../adapters/memory/index.js';

/**
 * The secondary types, under one type-only namespace: the types of option
 * fields, the kinds `RateLimitOptions` is a union of, the event payloads and
 * the adaptive and clock helper types (`RateLimitTypes.CalendarOptions`,
 * `RateLimitTypes.HeadersMode`, `RateLimitTypes.RateLimitDeniedEvent`, ...).
 */
export type * as RateLimitTypes from './rate-limit-types.js';
