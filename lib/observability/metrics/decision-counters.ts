import type { DecisionEvent, DecisionResult, OwnDecisionListener } from '../rate-limit-channels.js';
import type { Observation } from './metrics-backend.js';
import { NEAR_LIMIT_SHARE } from './instruments.js';

/** Every result, in the order of their slots. */
const RESULTS: readonly DecisionResult[] = [
  'admitted',
  'denied',
  'fail-open',
  'fail-closed',
  'skipped',
  'shadow-denied',
];
const RESULT_SLOT = new Map<DecisionResult, number>(RESULTS.map((result, i) => [result, i]));
const ADMITTED = 0;
const DENIED = 1;

/**
 * Decisions counted where they happen, exported when a reader collects.
 *
 * One series is a (limit name, transport) pair, bounded by the application's
 * own code; its counts are slots in a typed array, one per result. The
 * decision channel publishes a route's compiled array of limit names, the
 * same array every time, so the series of each position is looked up once
 * per array (a `WeakMap`: arrays built for one event, by a skip or a shadow
 * denial, are looked up by name and then forgotten with the event). A
 * decision therefore costs a `WeakMap` read and an increment per limit (none
 * for the last route seen). Against the target of +10 % of the guard's own
 * cost, this counting measured within the noise; the channel's publish did
 * not, so the module's decisions reach it directly, as fields rather than an
 * event object per request (`countDecision`, `listenToOwnDecisions`;
 * docs/observability.md, "Cost").
 */
export class DecisionCounters {
  private readonly seriesOf = new Map<string, number>();
  private readonly series: { readonly policy: string; readonly transport: string }[] = [];
  private readonly slotsOf = new WeakMap<
    readonly string[],
    { readonly transport: string; readonly slots: Int32Array }
  >();
  private counts = new Float64Array(64 * RESULTS.length);
  private near = new Float64Array(64);

  /** Counts one decision event: each limit's own result on admitted and denied requests, else the event's. */
  count(event: DecisionEvent): void {
    this.countDecision(event.limits, event.transport, event.result, event.decisions, event.bursts);
  }

  /** {@link count} of an event's fields, for the module's own decisions (no event object made); bound, so it can be handed over as is. */
  readonly countDecision: OwnDecisionListener = (limits, transport, result, decisions, bursts) => {
    const slots = this.slotsFor(limits, transport);
    if (result !== 'admitted' && result !== 'denied') {
      const offset = RESULT_SLOT.get(result) ?? ADMITTED;
      for (let i = 0; i < slots.length; i++) this.counts[slots[i]! * RESULTS.length + offset]! += 1;
      return;
    }
    for (let i = 0; i < slots.length; i++) {
      const decision = decisions[i];
      const slot = slots[i]!;
      if (decision === undefined || decision.allowed) {
        this.counts[slot * RESULTS.length + ADMITTED]! += 1;
        const burst = bursts?.[i];
        if (
          decision !== undefined &&
          burst !== undefined &&
          decision.remaining < burst * NEAR_LIMIT_SHARE
        )
          this.near[slot]! += 1;
      } else {
        this.counts[slot * RESULTS.length + DENIED]! += 1;
      }
    }
  };

  /** Cumulative decisions by limit, result and transport (results never seen are left out). */
  *requests(): Iterable<Observation> {
    for (let s = 0; s < this.series.length; s++) {
      const { policy, transport } = this.series[s]!;
      for (let r = 0; r < RESULTS.length; r++) {
        const value = this.counts[s * RESULTS.length + r]!;
        if (value > 0) yield { value, attributes: this.attributes(s, r, policy, transport) };
      }
    }
  }

  /** Cumulative admissions that left less than {@link NEAR_LIMIT_SHARE} of the burst, by limit and transport. */
  *nearLimit(): Iterable<Observation> {
    for (let s = 0; s < this.series.length; s++) {
      const value = this.near[s]!;
      if (value > 0)
        yield {
          value,
          attributes: this.attributes(s, -1, this.series[s]!.policy, this.series[s]!.transport),
        };
    }
  }

  private slotsFor(limits: readonly string[], transport: string): Int32Array {
    // The last route seen is the likeliest next one: no WeakMap read for it.
    if (limits === this.last.limits && transport === this.last.transport) return this.last.slots;
    const slots = this.lookUp(limits, transport);
    this.last = { limits, transport, slots };
    return slots;
  }

  private last: {
    readonly limits: readonly string[] | undefined;
    readonly transport: string;
    readonly slots: Int32Array;
  } = { limits: undefined, transport: '', slots: new Int32Array(0) };

  private lookUp(limits: readonly string[], transport: string): Int32Array {
    const known = this.slotsOf.get(limits);
    if (known !== undefined && known.transport === transport) return known.slots;
    const slots = new Int32Array(limits.length);
    for (let i = 0; i < limits.length; i++) slots[i] = this.seriesFor(limits[i]!, transport);
    this.slotsOf.set(limits, { transport, slots });
    return slots;
  }

  private seriesFor(policy: string, transport: string): number {
    const key = `${transport}\u0000${policy}`;
    let slot = this.seriesOf.get(key);
    if (slot === undefined) {
      slot = this.series.length;
      this.series.push({ policy, transport });
      this.seriesOf.set(key, slot);
      if (slot >= this.near.length) this.grow();
    }
    return slot;
  }

  private grow(): void {
    const counts = new Float64Array(this.counts.length * 2);
    counts.set(this.counts);
    this.counts = counts;
    const near = new Float64Array(this.near.length * 2);
    near.set(this.near);
    this.near = near;
  }

  /** Attribute objects are reused across collections, so exporters can cache what they derive from them. */
  private readonly attributeCache: (Readonly<Record<string, string>> | undefined)[] = [];

  private attributes(
    series: number,
    result: number,
    policy: string,
    transport: string,
  ): Readonly<Record<string, string>> {
    const index = series * (RESULTS.length + 1) + result + 1;
    let attributes = this.attributeCache[index];
    if (attributes === undefined) {
      attributes =
        result < 0 ? { policy, transport } : { policy, result: RESULTS[result]!, transport };
      this.attributeCache[index] = attributes;
    }
    return attributes;
  }
}
