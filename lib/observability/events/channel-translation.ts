import type { AdaptiveRateChange } from '../../adaptive/adaptive-rate-change.interface.js';
import {
  rateLimitChannels,
  type ConcurrencyLimitChannelEvent,
  type DecisionEvent,
  type FallbackChangeEvent,
  type PenaltyChannelEvent,
  type RateChangeChannelEvent,
  type StoreFailureEvent,
  type StoreRecoveryEvent,
} from '../rate-limit-channels.js';
import type {
  LimitVerdict,
  RateLimitEventMap,
  RateLimitEventType,
} from './rate-limit-events.interface.js';

/** What a translation hands on: one typed event. */
export type Emit = <T extends RateLimitEventType>(type: T, event: RateLimitEventMap[T]) => void;

/** A channel, and how its messages become events (already known to be the module's own). */
export interface ChannelTranslation {
  readonly channel: {
    subscribe(listener: (message: unknown) => void): void;
    unsubscribe(listener: (message: unknown) => void): unknown;
  };
  /** The event types it can produce: subscribed only while one of them is listened to. */
  readonly types: readonly RateLimitEventType[];
  readonly translate: (message: unknown, emit: Emit) => void;
}

/**
 * Every channel `RateLimitEvents` reads, and the events its messages make.
 * Messages are turned into events where they are published (cheap: the
 * denying limits picked out); the events are delivered later.
 */
export const CHANNEL_TRANSLATIONS: readonly ChannelTranslation[] = [
  {
    channel: rateLimitChannels.decision,
    types: ['denied', 'shadow-denied'],
    translate: translateDecision,
  },
  {
    channel: rateLimitChannels.storeFailure,
    types: ['store-failure'],
    translate: (message, emit) => {
      const { error, failMode, consecutiveFailures } = message as StoreFailureEvent;
      emit('store-failure', { error, failMode, consecutiveFailures: consecutiveFailures ?? 1 });
    },
  },
  {
    channel: rateLimitChannels.storeRecovery,
    types: ['store-recovered'],
    translate: (message, emit) =>
      emit('store-recovered', { failures: (message as StoreRecoveryEvent).failures }),
  },
  {
    channel: rateLimitChannels.fallback,
    types: ['fallback-entered', 'fallback-left'],
    translate: (message, emit) => {
      const { active } = message as FallbackChangeEvent;
      emit(active ? 'fallback-entered' : 'fallback-left', { active });
    },
  },
  {
    channel: rateLimitChannels.rateChange,
    types: ['rate-change'],
    translate: (message, emit) => {
      // The listener sees the AdaptiveRateChange itself, without the channel's owner.
      const { owner: _owner, ...change } = message as RateChangeChannelEvent;
      emit('rate-change', change as AdaptiveRateChange);
    },
  },
  { channel: rateLimitChannels.penalty, types: ['penalty'], translate: translatePenalty },
  {
    channel: rateLimitChannels.concurrencyLimitChange,
    types: ['limit-change'],
    translate: (message, emit) => {
      const { owner: _owner, ...change } = message as ConcurrencyLimitChannelEvent;
      emit('limit-change', change);
    },
  },
];

/** Denials and shadow denials; the other results (admitted, skipped, fail-open/closed) make no event. */
function translateDecision(message: unknown, emit: Emit): void {
  const event = message as DecisionEvent;
  if (event.result !== 'denied' && event.result !== 'shadow-denied') return;
  const verdicts: LimitVerdict[] = [];
  for (let i = 0; i < event.limits.length; i++) {
    const decision = event.decisions[i];
    if (decision === undefined || decision.allowed) continue;
    verdicts.push({ limit: event.limits[i]!, key: event.checks?.[i]?.key ?? '', decision });
  }
  if (verdicts.length === 0) return;
  emit(event.result, { route: event.route, transport: event.transport, verdicts });
}

/** One event per blocked key. */
function translatePenalty(message: unknown, emit: Emit): void {
  const { route, transport, limits, blocks } = message as PenaltyChannelEvent;
  blocks.forEach((block, i) =>
    emit('penalty', {
      route,
      transport,
      limit: limits[i]!,
      key: block.key,
      durationMs: block.durationMs,
    }),
  );
}
