import { channel } from 'node:diagnostics_channel';
import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import type { AdaptiveRateChange } from '../adaptive/adaptive-rate-change.interface.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import type { BlockCheck, BucketRef, LocalFallback } from '../store/rate-limit-store.interface.js';
import type { ConcurrencyLimitChange } from '../concurrency/adaptive/concurrency-limit-change.interface.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';

/**
 * The internal observability sink: `node:diagnostics_channel` channels the
 * guard, the limiter and the adaptive provider publish to. Publishers check
 * `hasSubscribers` first (as lru-cache does for its metrics), so nothing is
 * built or sent while nobody listens; exporters (metrics, events) subscribe.
 * Decision events also go to their module's metrics exporter directly
 * (`listenToOwnDecisions`): publishers check `decisionsWatched()` and call
 * `publishDecisionEvent()`.
 *
 * Channel names are part of the public surface:
 * `nestjs-holdup:decision`, `nestjs-holdup:store-failure`,
 * `nestjs-holdup:local-fallback`, `nestjs-holdup:rate-change`,
 * `nestjs-holdup:store-call`, `nestjs-holdup:store-recovery`,
 * `nestjs-holdup:fallback`, `nestjs-holdup:penalty`.
 *
 * **Scoping.** Channels are process-wide: two Nest applications in one
 * process publish on the same ones. Every message therefore carries `owner`,
 * the identity of the `RateLimitModule` instance that published it (one per
 * application; `undefined` for a `RateLimiter` built by hand), and the
 * module's own subscribers (`RateLimitEvents`, the metrics exporter) drop
 * messages whose owner is not theirs: one comparison per message.
 */

let owners = 0;

/** A new module identity (one per module instance). @internal */
export function newOwner(): RateLimitOwner {
  return Object.freeze({ id: ++owners });
}

/**
 * How a request's rate-limit decision ended. `'skipped'`: `allowList` or a
 * `skip` predicate took limits out of the decision (`limits` names them; a
 * call that skips some limits is also decided for the others).
 * `'shadow-denied'`: shadow limits (`limits` names them) would have denied
 * a request the others admitted; published besides its `'admitted'`.
 */
export type DecisionResult =
  'admitted' | 'denied' | 'fail-open' | 'fail-closed' | 'skipped' | 'shadow-denied';

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
  /** The module instance that decided (see "Scoping" above). */
  readonly owner?: RateLimitOwner;
  /**
   * The checks charged, parallel to `limits` (absent when the store failed
   * or the keys were never built). Their `key` is the bucket key, which holds
   * the caller's identity (an address, a user id): personal data. Metrics
   * never read it; `RateLimitEvents` passes it to application code.
   */
  readonly checks?: readonly BucketRef[];
}

/** Published on `nestjs-holdup:store-failure` for every failed store call. */
export interface StoreFailureEvent {
  readonly error: unknown;
  /** The fail mode that resolves it (`undefined` for direct `RateLimiter` calls, which reject). */
  readonly failMode: FailMode | undefined;
  readonly owner?: RateLimitOwner;
  /** Failed calls in a row, this one included: 1 is the first of an outage. */
  readonly consecutiveFailures?: number;
}

/** Published on `nestjs-holdup:store-recovery` on the first successful store call after failures. */
export interface StoreRecoveryEvent {
  /** Failed calls since the last success. */
  readonly failures: number;
  readonly owner?: RateLimitOwner;
}

/**
 * Published on `nestjs-holdup:fallback` when a store's local fallback
 * (`TwoTierStore`, `failMode: 'local'`) starts (`active: true`) or ends
 * deciding in place of its backend.
 */
export interface FallbackChangeEvent {
  readonly active: boolean;
  readonly owner?: RateLimitOwner;
}

/** Published on `nestjs-holdup:penalty` when a denial blocks keys (`blockDuration`). */
export interface PenaltyChannelEvent {
  readonly route: string;
  readonly transport: string;
  /** The blocked limits' names, parallel to `blocks`. */
  readonly limits: readonly string[];
  /** The blocks applied: bucket key (personal data, see {@link DecisionEvent.checks}) and duration. */
  readonly blocks: readonly BlockCheck[];
  readonly owner?: RateLimitOwner;
}

/** Published on `nestjs-holdup:local-fallback` for every decision a store's local tier took instead of its backend. */
export interface LocalFallbackEvent {
  /** True when the backend had just failed; false when it was already known to be down. */
  readonly afterFailure: boolean;
  readonly owner?: RateLimitOwner;
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
  readonly owner?: RateLimitOwner;
}

/** Published on `nestjs-holdup:rate-change`: the change, and the module whose limit changed. */
export type RateChangeChannelEvent = AdaptiveRateChange & { readonly owner?: RateLimitOwner };

/**
 * Published on `nestjs-holdup:concurrency-limit-change` when an adaptive
 * `concurrency` limit of a key moves: its name, key (personal data, as a
 * bucket key), the limit before and after, and the calls in flight and
 * waiting then.
 */
export interface ConcurrencyLimitChannelEvent extends ConcurrencyLimitChange {
  readonly name: string;
  readonly owner?: RateLimitOwner;
}

/** The channels, created once (`channel()` returns the same object for a name). @internal */
export const rateLimitChannels = {
  decision: channel('nestjs-holdup:decision'),
  storeFailure: channel('nestjs-holdup:store-failure'),
  localFallback: channel('nestjs-holdup:local-fallback'),
  rateChange: channel('nestjs-holdup:rate-change'),
  storeCall: channel('nestjs-holdup:store-call'),
  storeRecovery: channel('nestjs-holdup:store-recovery'),
  fallback: channel('nestjs-holdup:fallback'),
  penalty: channel('nestjs-holdup:penalty'),
  concurrencyLimitChange: channel('nestjs-holdup:concurrency-limit-change'),
} as const;

/**
 * Each module's own metrics exporter, by module identity: handed every
 * decision event of its module directly rather than through the decision
 * channel, whose publish cost 86-121 ns per decision in the guard bench even to
 * a listener that does nothing; handing the event over directly measured 25-65
 * ns cheaper (docs/observability.md, "Cost"). The channel is still published
 * to when anybody else subscribes. One listener per module (a module has one
 * exporter); the exporter's counting does not throw.
 */
const ownDecisionListeners = new Map<RateLimitOwner, OwnDecisionListener>();

/**
 * A module's exporter, handed each decision of its module as fields: no
 * event object is made for it (in one profile of `bench/guard`, holdup-otel
 * against holdup-fresh under `node --cpu-prof`, 87 of the 221 ms metrics
 * added went to the garbage collector). @internal
 */
export type OwnDecisionListener = (
  limits: readonly string[],
  transport: string,
  result: DecisionResult,
  decisions: readonly RateLimitDecision[],
  bursts: readonly number[] | undefined,
) => void;

/** Whether a decision event has anybody to go to: a channel subscriber or a module's exporter. @internal */
export function decisionsWatched(): boolean {
  return ownDecisionListeners.size > 0 || rateLimitChannels.decision.hasSubscribers;
}

/** A decision event to its module's exporter, then the channel (callers check {@link decisionsWatched} first). @internal */
export function publishDecisionEvent(event: DecisionEvent): void {
  toOwnDecisionListener(
    event.owner,
    event.limits,
    event.transport,
    event.result,
    event.decisions,
    event.bursts,
  );
  if (rateLimitChannels.decision.hasSubscribers) rateLimitChannels.decision.publish(event);
}

// The last module seen and its listener: one comparison per event rather than a `Map` read (one module per process is the common case).
let lastOwner: RateLimitOwner | undefined;
let lastListener: OwnDecisionListener | undefined;

/**
 * A decision of `owner`'s to its exporter, if it has one: what
 * {@link publishDecisionEvent} does first, for the request path, which then
 * makes the event only for channel subscribers. @internal
 */
export function toOwnDecisionListener(
  owner: RateLimitOwner | undefined,
  limits: readonly string[],
  transport: string,
  result: DecisionResult,
  decisions: readonly RateLimitDecision[],
  bursts: readonly number[] | undefined,
): void {
  if (owner === undefined || ownDecisionListeners.size === 0) return;
  if (owner !== lastOwner) {
    lastOwner = owner;
    lastListener = ownDecisionListeners.get(owner);
  }
  lastListener?.(limits, transport, result, decisions, bursts);
}

/** Hands `owner`'s decisions to `listener`; returns what stops it. @internal */
export function listenToOwnDecisions(
  owner: RateLimitOwner,
  listener: OwnDecisionListener,
): () => void {
  ownDecisionListeners.set(owner, listener);
  lastOwner = undefined;
  return () => {
    if (ownDecisionListeners.get(owner) !== listener) return;
    ownDecisionListeners.delete(owner);
    // Forgotten, so that a closed module is not kept alive by the cache.
    lastOwner = undefined;
    lastListener = undefined;
  };
}

/** Event types by channel, for subscribers. */
export interface RateLimitChannelEvents {
  'nestjs-holdup:decision': DecisionEvent;
  'nestjs-holdup:store-failure': StoreFailureEvent;
  'nestjs-holdup:local-fallback': LocalFallbackEvent;
  'nestjs-holdup:rate-change': RateChangeChannelEvent;
  'nestjs-holdup:store-call': StoreCallEvent;
  'nestjs-holdup:store-recovery': StoreRecoveryEvent;
  'nestjs-holdup:fallback': FallbackChangeEvent;
  'nestjs-holdup:penalty': PenaltyChannelEvent;
}

/**
 * Publishes a store's fallback switches (`LocalFallback.watch`) on
 * `nestjs-holdup:fallback` for `owner`; returns what stops it. A switch is
 * rare: nothing is paid per request. @internal
 */
export function publishFallbackSwitches(
  fallback: LocalFallback | undefined,
  owner: RateLimitOwner | undefined,
): (() => void) | undefined {
  return fallback?.watch?.((active) => {
    if (rateLimitChannels.fallback.hasSubscribers)
      rateLimitChannels.fallback.publish({ active, owner });
  });
}
