import type { ConcurrencyLimitChange } from '../../concurrency/adaptive/concurrency-limit-change.interface.js';
import type { AdaptiveRateChange } from '../../adaptive/adaptive-rate-change.interface.js';
import type { RateLimitDecision } from '../../algorithms/rate-limit-decision.js';
import type { FailMode } from '../../interfaces/rate-limit-options.interface.js';

/**
 * One limit's part in a denial. `key` is the bucket key (the limit's
 * namespace and the caller's identity: an address, a user id, whatever the
 * limit's `key` returned): **personal data** under most privacy laws. Log or
 * forward it only where such data may go.
 */
export interface LimitVerdict {
  /** The limit's name. */
  readonly limit: string;
  readonly key: string;
  readonly decision: RateLimitDecision;
}

/** A request denied by the route's limits (`verdicts`: the limits that denied it). */
export interface RateLimitDeniedEvent {
  /** `Controller.handler:path`. */
  readonly route: string;
  /** `http`, `graphql`, `ws`, `rpc`. */
  readonly transport: string;
  readonly verdicts: readonly LimitVerdict[];
}

/** A request admitted that shadow limits would have denied (`verdicts`: those limits). */
export type RateLimitShadowDeniedEvent = RateLimitDeniedEvent;

/** A store call failed. */
export interface RateLimitStoreFailureEvent {
  readonly error: unknown;
  /** The fail mode that resolved it (`undefined` for a `RateLimiter` call, which rejects). */
  readonly failMode: FailMode | undefined;
  /** Failed calls in a row, this one included: `1` marks the start of an outage. */
  readonly consecutiveFailures: number;
}

/** The first successful store call after failures. */
export interface RateLimitStoreRecoveredEvent {
  /** Failed calls since the last success. */
  readonly failures: number;
}

/** The store's local fallback started (`fallback-entered`) or stopped (`fallback-left`) deciding in place of its backend. */
export interface RateLimitFallbackEvent {
  readonly active: boolean;
}

/** A denial blocked a key (`blockDuration`). `key` is personal data, as in {@link LimitVerdict}. */
export interface RateLimitPenaltyEvent {
  readonly route: string;
  readonly transport: string;
  readonly limit: string;
  readonly key: string;
  readonly durationMs: number;
}

/**
 * An adaptive `concurrency` limit moved (`limit-change`): the calls it
 * allows in flight for `key` (personal data, as in {@link LimitVerdict}),
 * before and after, with the calls in flight and waiting then.
 */
export interface ConcurrencyLimitChangeEvent extends ConcurrencyLimitChange {
  readonly name: string;
}

/**
 * Every event {@link RateLimitEvents} delivers, by type. With
 * `events: { eventEmitter: true }` each is also emitted as `rate-limit.<type>`.
 */
export interface RateLimitEventMap {
  denied: RateLimitDeniedEvent;
  'shadow-denied': RateLimitShadowDeniedEvent;
  'store-failure': RateLimitStoreFailureEvent;
  'store-recovered': RateLimitStoreRecoveredEvent;
  'fallback-entered': RateLimitFallbackEvent;
  'fallback-left': RateLimitFallbackEvent;
  'rate-change': AdaptiveRateChange;
  penalty: RateLimitPenaltyEvent;
  'limit-change': ConcurrencyLimitChangeEvent;
}

export type RateLimitEventType = keyof RateLimitEventMap;

/** A listener of one event type. It may return a promise: a rejection is contained like a throw. */
export type RateLimitEventListener<T extends RateLimitEventType> = (
  event: RateLimitEventMap[T],
) => unknown;

/** Every event type, in a fixed order. */
export const RATE_LIMIT_EVENT_TYPES: readonly RateLimitEventType[] = Object.freeze([
  'denied',
  'shadow-denied',
  'store-failure',
  'store-recovered',
  'fallback-entered',
  'fallback-left',
  'rate-change',
  'penalty',
  'limit-change',
]);
