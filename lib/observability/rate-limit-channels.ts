import { channel } from 'node:diagnostics_channel';
import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import type { AdaptiveRateChange } from '../adaptive/adaptive-rate-change.interface.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';

/**
 * The internal observability sink: `node:diagnostics_channel` channels the
 * guard, the limiter and the adaptive provider publish to. Publishers check
 * `hasSubscribers` first (as lru-cache does for its metrics), so nothing is
 * built or sent while nobody listens; exporters (metrics, events) subscribe.
 *
 * Channel names are part of the public surface:
 * `nestjs-holdup:decision`, `nestjs-holdup:store-failure`,
 * `nestjs-holdup:local-fallback`, `nestjs-holdup:rate-change`,
 * `nestjs-holdup:store-call`.
 */

/**
 * How a request's rate-limit decision ended. `'skipped'`: `allowList` or a
 * `skip` predicate took limits out of the decision (`limits` names them; a
 * call that skips some limits is also decided for the others).
 * `'shadow-denied'`: shadow limits (`limits` names them) would have denied
 * a request the others admitted; published besides its `'admitted'`.
 */
export type DecisionResult = 'admitted' | 'denied' | 'fail-open' | 'fail-closed' | 'skipped' | 'shadow-denied';

/** Published on `nestjs-holdup:decision`, once per request the guard decided. */
export interface DecisionEvent {
  /** The route (`Controller.handler:path`), never a caller identity. */
  readonly route: string;
  /** The context type (`http`, `graphql`, `ws`, `rpc`). */
  readonly transport: string;
  /** Names of the limits that applied, in order. */
  readonly limits: readonly string[];
  readonly result: DecisionResult;
  /** Each limit's configured burst, in the order of `limits` (for "near the limit"; adaptive limits report their configured burst). */
  readonly bursts?: readonly number[];
  /** One per limit; empty when the store failed. */
  readonly decisions: readonly RateLimitDecision[];
}

/** Published on `nestjs-holdup:store-failure` for every failed store call. */
export interface StoreFailureEvent {
  readonly error: unknown;
  /** The fail mode that resolves it (`undefined` for direct `RateLimiter` calls, which reject). */
  readonly failMode: FailMode | undefined;
}

/** Published on `nestjs-holdup:local-fallback` for every decision a store's local tier took instead of its backend. */
export interface LocalFallbackEvent {
  /** True when the backend had just failed; false when it was already known to be down. */
  readonly afterFailure: boolean;
}

/**
 * Published on `nestjs-holdup:store-call` after every store call the limiter
 * waited for (a promise: a round trip), only while somebody subscribes (the
 * clock is read only then). Synchronous answers (the memory store, the
 * two-tier store's local decisions) are not timed.
 */
export interface StoreCallEvent {
  /** Seconds from the request's hand-off (the store's promise) to its answer or failure. */
  readonly durationSeconds: number;
  readonly failed: boolean;
}

/** The channels, created once (`channel()` returns the same object for a name). @internal */
export const rateLimitChannels = {
  decision: channel('nestjs-holdup:decision'),
  storeFailure: channel('nestjs-holdup:store-failure'),
  localFallback: channel('nestjs-holdup:local-fallback'),
  rateChange: channel('nestjs-holdup:rate-change'),
  storeCall: channel('nestjs-holdup:store-call'),
} as const;

/** Event types by channel, for subscribers. */
export interface RateLimitChannelEvents {
  'nestjs-holdup:decision': DecisionEvent;
  'nestjs-holdup:store-failure': StoreFailureEvent;
  'nestjs-holdup:local-fallback': LocalFallbackEvent;
  'nestjs-holdup:rate-change': AdaptiveRateChange;
  'nestjs-holdup:store-call': StoreCallEvent;
}
