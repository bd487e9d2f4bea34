import type { AdaptiveRateChange } from '../../adaptive/adaptive-rate-change.interface.js';
import type { RateLimitStoreStats } from '../../store/rate-limit-store.interface.js';
import {
  listenToOwnDecisions,
  rateLimitChannels,
  type ConcurrencyLimitChannelEvent,
  type DecisionEvent,
  type StoreCallEvent,
  type StoreFailureEvent,
} from '../rate-limit-channels.js';
import type { RateLimitOwner } from '../../interfaces/rate-limit-owner.interface.js';
import { DecisionCounters } from './decision-counters.js';
import { DurationHistogram } from './duration-histogram.js';
import { INSTRUMENTS } from './instruments.js';
import type {
  MetricAttributes,
  MetricRecord,
  MetricsBackend,
  Observation,
} from './metrics-backend.js';

/** What the subscriber needs to know about the module it measures. */
export interface MetricsSource {
  /** `memory`, `redis`, `two-tier` or `custom` (see `storeKind`). */
  readonly storeKind: string;
  /** The two-tier store's counters (its `stats()`), read at collection time; undefined for other stores. */
  readonly twoTierStats: (() => RateLimitStoreStats) | undefined;
  /** The module measured: messages other modules (other applications in the process) publish are not counted. */
  readonly owner?: RateLimitOwner;
}

type Listener = (message: unknown) => void;
interface Subscribable {
  subscribe(listener: Listener): void;
  unsubscribe(listener: Listener): unknown;
}

/**
 * Turns the channel events into measurements. The request path only counts
 * (typed-array slots, fixed histogram buckets); exporters read the counts
 * when they collect. The one exception is OpenTelemetry's histogram, which
 * has no asynchronous form: it records each timed store call, and only store
 * calls that waited for a promise (a round trip) are timed.
 */
export class MetricsSubscriber {
  private readonly decisions = new DecisionCounters();
  private readonly durations = new DurationHistogram();
  private readonly durationSeries: { readonly success: number; readonly failure: number };
  private readonly durationAttributes: {
    readonly success: MetricAttributes;
    readonly failure: MetricAttributes;
  };
  private readonly recordDuration: readonly MetricRecord[];
  private readonly failures = new Map<
    string,
    { readonly attributes: MetricAttributes; value: number }
  >();
  private localFallbacks = 0;
  private readonly adaptiveRates = new Map<string, number>();
  private readonly concurrencyLimits = new Map<string, number>();
  private readonly storeAttributes: MetricAttributes;
  private readonly listeners: [Subscribable, Listener][] = [];
  private readonly owner: RateLimitOwner | undefined;
  private stopDecisions: (() => void) | undefined;

  constructor(
    private readonly backends: readonly MetricsBackend[],
    source: MetricsSource,
  ) {
    this.owner = source.owner;
    this.storeAttributes = { store: source.storeKind };
    this.durationAttributes = {
      success: { ...this.storeAttributes, outcome: 'success' },
      failure: { ...this.storeAttributes, outcome: 'failure' },
    };
    this.durationSeries = {
      success: this.durations.define(this.durationAttributes.success),
      failure: this.durations.define(this.durationAttributes.failure),
    };
    const records: MetricRecord[] = [];
    for (const backend of backends) {
      backend.observe(INSTRUMENTS.requests, () => this.decisions.requests());
      backend.observe(INSTRUMENTS.nearLimit, () => this.decisions.nearLimit());
      const record = backend.histogram(INSTRUMENTS.storeDuration, () => this.durations.read());
      if (record !== undefined) records.push(record);
      backend.observe(INSTRUMENTS.storeFailures, () => this.failures.values());
      backend.observe(INSTRUMENTS.localFallback, () =>
        this.localFallbacks > 0
          ? [{ value: this.localFallbacks, attributes: this.storeAttributes }]
          : [],
      );
      backend.observe(INSTRUMENTS.adaptiveRate, () => this.readAdaptiveRates());
      backend.observe(INSTRUMENTS.concurrencyLimit, () => this.readConcurrencyLimits());
      const stats = source.twoTierStats;
      if (stats !== undefined) this.observeTwoTier(backend, stats);
    }
    this.recordDuration = records;
  }

  /** Subscribes to every channel; the module's decisions come straight from its engine (`listenToOwnDecisions`). */
  start(): void {
    const decisions = this.decisions;
    if (this.owner === undefined)
      this.listen(rateLimitChannels.decision, (event) => decisions.count(event as DecisionEvent));
    else this.stopDecisions = listenToOwnDecisions(this.owner, decisions.countDecision);
    this.listen(rateLimitChannels.storeCall, (event) => this.onStoreCall(event as StoreCallEvent));
    this.listen(rateLimitChannels.storeFailure, (event) =>
      this.onStoreFailure(event as StoreFailureEvent),
    );
    this.listen(rateLimitChannels.localFallback, () => this.localFallbacks++);
    this.listen(rateLimitChannels.rateChange, (event) =>
      this.adaptiveRates.set(
        (event as AdaptiveRateChange).name,
        (event as AdaptiveRateChange).rate,
      ),
    );
    this.listen(rateLimitChannels.concurrencyLimitChange, (event) =>
      this.concurrencyLimits.set(
        (event as ConcurrencyLimitChannelEvent).name,
        (event as ConcurrencyLimitChannelEvent).to,
      ),
    );
  }

  /** Unsubscribes and detaches the exporters' instruments. */
  stop(): void {
    this.stopDecisions?.();
    this.stopDecisions = undefined;
    for (const [channel, listener] of this.listeners.splice(0)) channel.unsubscribe(listener);
    for (const backend of this.backends) backend.close();
  }

  private onStoreCall(event: StoreCallEvent): void {
    const outcome = event.failed ? 'failure' : 'success';
    this.durations.record(this.durationSeries[outcome], event.durationSeconds);
    for (const record of this.recordDuration)
      record(event.durationSeconds, this.durationAttributes[outcome]);
  }

  private onStoreFailure(event: StoreFailureEvent): void {
    const failMode = event.failMode ?? 'none';
    let entry = this.failures.get(failMode);
    if (entry === undefined)
      this.failures.set(
        failMode,
        (entry = { attributes: { ...this.storeAttributes, fail_mode: failMode }, value: 0 }),
      );
    entry.value++;
  }

  private *readConcurrencyLimits(): Iterable<Observation> {
    for (const [policy, value] of this.concurrencyLimits) yield { value, attributes: { policy } };
  }

  private *readAdaptiveRates(): Iterable<Observation> {
    for (const [policy, value] of this.adaptiveRates) yield { value, attributes: { policy } };
  }

  private observeTwoTier(backend: MetricsBackend, stats: () => RateLimitStoreStats): void {
    const one = (read: (stats: RateLimitStoreStats) => number) => () => [
      { value: read(stats()), attributes: this.storeAttributes },
    ];
    backend.observe(
      INSTRUMENTS.twoTierRedisCalls,
      one((s) => s.redisCalls),
    );
    backend.observe(
      INSTRUMENTS.twoTierLeases,
      one((s) => s.leasesTaken),
    );
    backend.observe(
      INSTRUMENTS.twoTierDenyCacheHits,
      one((s) => s.denyCacheHits),
    );
    backend.observe(
      INSTRUMENTS.twoTierLocalDecisions,
      one((s) => s.localDecisions),
    );
  }

  /** Subscribes `listener` to this module's messages only: one comparison per message. */
  private listen(channel: Subscribable, listener: Listener): void {
    const owner = this.owner;
    const own: Listener =
      owner === undefined
        ? listener
        : (message) => {
            if ((message as { owner?: RateLimitOwner }).owner === owner) listener(message);
          };
    channel.subscribe(own);
    this.listeners.push([channel, own]);
  }
}
