// The types behind the root's, exported by the root as one type-only namespace,
// `RateLimitTypes` (as lru-cache does with `LRUCache.Options`): the types of
// option fields (`RateLimitTypes.CalendarOptions`, `RateLimitTypes.HeadersMode`),
// the per-kind shapes `RateLimitOptions` is a union of, the adaptive and clock
// helper types and the event payloads `RateLimitEventMap` maps to. An
// application rarely writes them: the root's `RateLimitOptions`,
// `RateLimitModuleOptions` and `RateLimitEventMap` reach every one. Types only:
// this module has no run-time export, and only `export type` may re-export it.

// `RateLimitOptions`: the kinds it is a union of, and the types of its fields
export type {
  BaseLimitOptions,
  RequestRateOptions,
  TokenBucketLimitOptions,
  WindowLimitOptions,
  ConcurrencyLimitOptions,
  DynamicRate,
  DynamicBurst,
  KeyFunctionResult,
  RateLimitAlgorithm,
  CalendarOptions,
  SkipPredicate,
  RateLimitSettleOutcome,
} from './interfaces/rate-limit-options.interface.js';

// The adaptive form of `concurrency`, and what `RateLimiter.concurrencyLimit` answers
export type {
  AdaptiveConcurrencyOptions,
  AdaptiveConcurrencyLimitOptions,
} from './interfaces/adaptive-concurrency-options.interface.js';
export type { ConcurrencyLimitState } from './concurrency/adaptive/adaptive-concurrency-limits.js';

// `RateLimitModuleOptions`: the types of its fields
export type {
  HeadersMode,
  ErrorFormat,
  TrustProxy,
} from './interfaces/rate-limit-module-options.interface.js';
export type { HotKeysOptions } from './interfaces/hot-keys-options.interface.js';
export type { RateLimitMetricsOptions } from './interfaces/metrics-options.interface.js';
export type { RateLimitEventsOptions } from './interfaces/events-options.interface.js';

// Adaptive limits: what `isFailure` is given, what `AdaptiveRateProvider.report()`
// takes, the rate changes it announces
export type { AdaptiveHandlerResult } from './interfaces/adaptive-options.interface.js';
export type { AdaptiveOutcome } from './adaptive/adaptive-outcome.js';
export type {
  AdaptiveRateChange,
  AdaptiveRateListener,
} from './adaptive/adaptive-rate-change.interface.js';

// The clock's timer (implementing `RateLimitClock`)
export type { ClockTimer } from './clock.js';

// `RateLimitEvents`: the payloads of `RateLimitEventMap`, and its listener types
export type {
  RateLimitEventType,
  RateLimitEventListener,
  LimitVerdict,
  RateLimitDeniedEvent,
  RateLimitShadowDeniedEvent,
  RateLimitStoreFailureEvent,
  RateLimitStoreRecoveredEvent,
  RateLimitFallbackEvent,
  RateLimitPenaltyEvent,
  ConcurrencyLimitChangeEvent,
} from './observability/events/rate-limit-events.interface.js';
