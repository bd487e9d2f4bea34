import type { AdaptiveRateChange } from '../../adaptive/adaptive-rate-change.interface.js';
import type { TwoTierStoreStats } from '../../../adapters/two-tier/two-tier.stats.js';
import { rateLimitChannels, type DecisionEvent, type StoreCallEvent, type StoreFailureEvent } from '../rate-limit-channels.js';
import { INSTRUMENTS, NEAR_LIMIT_SHARE } from './instruments.js';
import type { MetricAttributes, MetricsBackend, Observation, MetricRecord } from './metrics-backend.js';

/** What the subscriber needs to know about the module it measures. */
export interface MetricsSource {
  /** `memory`, `redis`, `two-tier` or `custom` (see `storeKind`). */
  readonly storeKind: string;
  /** The two-tier store's counters, read at collection time; undefined for other stores. */
  readonly twoTierStats: (() => TwoTierStoreStats) | undefined;
}

/**
 * Turns the channel events into measurements on every backend. Attribute
 * objects are built once per combination (bounded: limits × results ×
 * transports) and reused, so a decision costs a map lookup and an add.
 */
export class MetricsSubscriber {
  private readonly requests: MetricRecord[];
  private readonly nearLimit: MetricRecord[];
  private readonly storeDuration: MetricRecord[];
  private readonly storeFailures: MetricRecord[];
  private readonly localFallback: MetricRecord[];
  private readonly attributeCache = new Map<string, MetricAttributes>();
  private readonly adaptiveRates = new Map<string, number>();
  private readonly storeAttributes: MetricAttributes;
  private readonly listeners: [{ unsubscribe(listener: (message: unknown) => void): unknown }, (message: unknown) => void][] = [];

  constructor(
    private readonly backends: readonly MetricsBackend[],
    source: MetricsSource,
  ) {
    const each = (spec: (typeof INSTRUMENTS)[keyof typeof INSTRUMENTS]) => backends.map((backend) => backend.instrument(spec));
    this.requests = each(INSTRUMENTS.requests);
    this.nearLimit = each(INSTRUMENTS.nearLimit);
    this.storeDuration = each(INSTRUMENTS.storeDuration);
    this.storeFailures = each(INSTRUMENTS.storeFailures);
    this.localFallback = each(INSTRUMENTS.localFallback);
    this.storeAttributes = { store: source.storeKind };
    for (const backend of backends) {
      backend.observe(INSTRUMENTS.adaptiveRate, () => this.readAdaptiveRates());
      const stats = source.twoTierStats;
      if (stats !== undefined) this.observeTwoTier(backend, stats);
    }
  }

  /** Subscribes to every channel. */
  start(): void {
    this.listen(rateLimitChannels.decision, (event) => this.onDecision(event as DecisionEvent));
    this.listen(rateLimitChannels.storeCall, (event) => this.onStoreCall(event as StoreCallEvent));
    this.listen(rateLimitChannels.storeFailure, (event) => this.onStoreFailure(event as StoreFailureEvent));
    this.listen(rateLimitChannels.localFallback, () => add(this.localFallback, 1, this.storeAttributes));
    this.listen(rateLimitChannels.rateChange, (event) => this.adaptiveRates.set((event as AdaptiveRateChange).name, (event as AdaptiveRateChange).rate));
  }

  /** Unsubscribes and detaches the observable callbacks. */
  stop(): void {
    for (const [channel, listener] of this.listeners.splice(0)) channel.unsubscribe(listener);
    for (const backend of this.backends) backend.close();
  }

  /**
   * One measurement per limit the event names: on an admitted or denied
   * request each limit's own decision (a denied request may hold limits that
   * admitted), otherwise the event's result (a store failure, a skip, a
   * shadow denial).
   */
  onDecision(event: DecisionEvent): void {
    const { limits, decisions, transport } = event;
    const ownDecisions = event.result === 'admitted' || event.result === 'denied';
    for (let i = 0; i < limits.length; i++) {
      const decision = decisions[i];
      const result = ownDecisions && decision !== undefined ? (decision.allowed ? 'admitted' : 'denied') : event.result;
      add(this.requests, 1, this.attributes(limits[i]!, result, transport));
      const burst = event.bursts?.[i];
      if (ownDecisions && decision?.allowed && burst !== undefined && decision.remaining < burst * NEAR_LIMIT_SHARE) {
        add(this.nearLimit, 1, this.attributes(limits[i]!, undefined, transport));
      }
    }
  }

  private onStoreCall(event: StoreCallEvent): void {
    add(this.storeDuration, event.durationSeconds, event.failed ? this.storeOutcome('failure') : this.storeOutcome('success'));
  }

  private onStoreFailure(event: StoreFailureEvent): void {
    add(this.storeFailures, 1, this.cached(`failure|${event.failMode ?? 'none'}`, () => ({ ...this.storeAttributes, fail_mode: event.failMode ?? 'none' })));
  }

  private storeOutcome(outcome: 'success' | 'failure'): MetricAttributes {
    return this.cached(`outcome|${outcome}`, () => ({ ...this.storeAttributes, outcome }));
  }

  private attributes(policy: string, result: string | undefined, transport: string): MetricAttributes {
    const key = `${policy}\u0000${result ?? ''}\u0000${transport}`;
    return this.cached(key, (): MetricAttributes => (result === undefined ? { policy, transport } : { policy, result, transport }));
  }

  private cached(key: string, build: () => MetricAttributes): MetricAttributes {
    let attributes = this.attributeCache.get(key);
    if (attributes === undefined) {
      attributes = build();
      this.attributeCache.set(key, attributes);
    }
    return attributes;
  }

  private *readAdaptiveRates(): Iterable<Observation> {
    for (const [policy, value] of this.adaptiveRates) yield { value, attributes: { policy } };
  }

  private observeTwoTier(backend: MetricsBackend, stats: () => TwoTierStoreStats): void {
    const one = (read: (stats: TwoTierStoreStats) => number) => () => [{ value: read(stats()), attributes: this.storeAttributes }];
    backend.observe(INSTRUMENTS.twoTierRedisCalls, one((s) => s.redisCalls));
    backend.observe(INSTRUMENTS.twoTierLeases, one((s) => s.leasesTaken));
    backend.observe(INSTRUMENTS.twoTierDenyCacheHits, one((s) => s.denyCacheHits));
    backend.observe(INSTRUMENTS.twoTierLocalDecisions, one((s) => s.localDecisions));
  }

  private listen(channel: { subscribe(listener: (message: unknown) => void): void; unsubscribe(listener: (message: unknown) => void): unknown }, listener: (message: unknown) => void): void {
    channel.subscribe(listener);
    this.listeners.push([channel, listener]);
  }
}

function add(records: readonly MetricRecord[], value: number, attributes: MetricAttributes): void {
  for (const record of records) record(value, attributes);
}
