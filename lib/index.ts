// Nest module
export { RateLimitModule } from './rate-limit.module.js';
export { RATE_LIMIT_MODULE_OPTIONS } from './rate-limit.module-definition.js';
export { RateLimitGuard, type RateLimitStoreFailure } from './rate-limit.guard.js';
export { RateLimitInterceptor } from './rate-limit.interceptor.js';
export { RateLimiter, type ProgrammaticLimit } from './rate-limiter.service.js';
export type { AcquireOptions } from './policies/delay/acquire-options.js';
export type { HotKey, HottestKeysQuery } from './observability/hot-keys/hot-keys.js';
export type { HotKeysOptions } from './interfaces/hot-keys-options.interface.js';
export { RateLimit } from './decorators/rate-limit.decorator.js';
export { SkipRateLimit } from './decorators/skip-rate-limit.decorator.js';
export { RateLimitExceededException, type RateLimitExceededDetails } from './errors/rate-limit-exceeded.exception.js';
export { RateLimitExceptionFilter } from './rate-limit-exception.filter.js';
export { QUOTA_EXCEEDED_TYPE } from './errors/denial-body.js';
export { RateLimitStoreError } from './errors/rate-limit-store.error.js';
export { RateLimitKeyError } from './errors/rate-limit-key.error.js';
export { RateLimitValueError } from './policies/dynamic-limit.js';
export { RATE_LIMIT_CLOCK, RATE_LIMIT_STORE, DEFAULT_LIMIT_NAME } from './rate-limit.constants.js';

// Keys: the client address as the module sees it, for key functions
export { clientAddress } from './keys/client-address-helper.js';

// Options
export type {
  RateLimitOptions,
  BaseLimitOptions,
  RequestRateOptions,
  TokenBucketLimitOptions,
  WindowLimitOptions,
  ConcurrencyLimitOptions,
  Rate,
  DynamicRate,
  DynamicBurst,
  KeyStrategy,
  KeyFunctionResult,
  FailMode,
  RateLimitAlgorithm,
  CalendarOptions,
  ChargeMode,
  RateLimitOutcome,
} from './interfaces/rate-limit-options.interface.js';
export type { RateLimitModuleOptions, RateLimitOptionsFactory, HeadersMode, ErrorFormat, TrustProxy } from './interfaces/rate-limit-module-options.interface.js';

// Transports (what the guard's protected hooks are given)
export type { RateLimitTransport, RequestResponse, RateLimitDenial } from './transports/rate-limit-transport.interface.js';
export { RateLimitGraphqlError } from './transports/graphql.transport.js';

// Adaptive limits (the AIMD engine itself: `nestjs-holdup/algorithms`)
export * from './adaptive/index.js';

// Observability: diagnostics channels the module publishes to
export type {
  DecisionEvent,
  DecisionResult,
  StoreFailureEvent,
  LocalFallbackEvent,
  StoreCallEvent,
  StoreRecoveryEvent,
  FallbackChangeEvent,
  PenaltyChannelEvent,
  RateChangeChannelEvent,
  RateLimitChannelEvents,
} from './observability/rate-limit-channels.js';
export type { RateLimitOwner } from './interfaces/rate-limit-owner.interface.js';

// Events for application code (docs/events-and-health.md)
export { RateLimitEvents } from './observability/events/rate-limit-events.js';
export type {
  RateLimitEventMap,
  RateLimitEventType,
  RateLimitEventListener,
  LimitVerdict,
  RateLimitDeniedEvent,
  RateLimitShadowDeniedEvent,
  RateLimitStoreFailureEvent,
  RateLimitStoreRecoveredEvent,
  RateLimitFallbackEvent,
  RateLimitPenaltyEvent,
} from './observability/events/rate-limit-events.interface.js';
export type { RateLimitEventsOptions } from './interfaces/events-options.interface.js';
export type { RateLimitMetricsOptions, MeterProviderLike, PrometheusRegistryLike } from './interfaces/metrics-options.interface.js';

// Store contract (for custom stores; the math they need: `nestjs-holdup/algorithms`), clock
export type * from './store/rate-limit-store.interface.js';
export type * from './store/concurrency-slots.interface.js';
export type { RateLimitDecision, DenyReason } from './algorithms/rate-limit-decision.js';
export { ManualClock, systemClock, type ClockTimer, type RateLimitClock } from './clock.js';

// Default store
export { MemoryStore, type MemoryStoreOptions } from '../adapters/memory/index.js';
