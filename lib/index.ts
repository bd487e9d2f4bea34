// Nest module
export { RateLimitModule } from './rate-limit.module.js';
export { RATE_LIMIT_MODULE_OPTIONS } from './rate-limit.module-definition.js';
export { RateLimitGuard, type RateLimitDenial } from './rate-limit.guard.js';
export { RateLimitInterceptor } from './rate-limit.interceptor.js';
export { RateLimiter, type ProgrammaticLimit } from './rate-limiter.service.js';
export { RateLimit } from './decorators/rate-limit.decorator.js';
export { SkipRateLimit } from './decorators/skip-rate-limit.decorator.js';
export { RateLimitExceededException } from './rate-limit-exceeded.exception.js';
export { RateLimitStoreError } from './errors/rate-limit-store.error.js';
export { RATE_LIMIT_CLOCK, RATE_LIMIT_STORE, DEFAULT_LIMIT_NAME } from './rate-limit.constants.js';
export type { RequestResponse } from './request-response.js';

// Options
export type {
  RateLimitOptions,
  Rate,
  KeyStrategy,
  FailMode,
} from './interfaces/rate-limit-options.interface.js';
export type { RateLimitModuleOptions, RateLimitOptionsFactory, HeadersMode, TrustProxy } from './interfaces/rate-limit-module-options.interface.js';

// Adaptive limits
export * from './adaptive/index.js';

// Algorithms, store contract, clock
export { gcraConsume, gcraPeek, nextTokenMs, type RateLimitDecision, type BucketLimit, type DenyReason, type GcraOutcome } from './algorithms/gcra.js';
export type * from './store/rate-limit-store.interface.js';
export { ManualClock, systemClock, type RateLimitClock } from './clock.js';
export { parseRate } from './limits/parse-rate.js';

// Default store
export { MemoryStore, type MemoryStoreOptions } from '../adapters/memory/index.js';
