// `nestjs-holdup/observability`: the payloads the module publishes on its
// diagnostics channels (`nestjs-holdup:decision`, ...; docs/observability.md),
// for subscribers, and the shapes the metrics options accept. Application
// events (`RateLimitEvents`) and the metrics options themselves are at the root.
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
} from './rate-limit-channels.js';
export type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
export type {
  MeterProviderLike,
  PrometheusRegistryLike,
} from '../interfaces/metrics-options.interface.js';
