import type { DecisionEvent } from '../rate-limit-channels.js';
import { DecisionCounters } from './decision-counters.js';
import { DurationHistogram } from './duration-histogram.js';

const decision = (allowed: boolean, remaining: number) =>
  ({ allowed, remaining, retryAfterMs: 0, resetMs: 0, limit: 10 }) as never;

describe('DecisionCounters', () => {
  it('counts each limit of a route under its own result, and the near-limit admissions', () => {
    const counters = new DecisionCounters();
    const names = ['a', 'b'];
    const event = (allowedB: boolean, remainingA: number): DecisionEvent => ({
      route: 'R',
      transport: 'http',
      limits: names,
      bursts: [10, 10],
      result: allowedB ? 'admitted' : 'denied',
      decisions: [decision(true, remainingA), decision(allowedB, 0)],
    });
    counters.count(event(true, 5));
    counters.count(event(false, 0.5));
    counters.count({
      route: 'R',
      transport: 'http',
      limits: ['a', 'b'],
      result: 'fail-open',
      decisions: [],
    });
    const totals = Object.fromEntries(
      [...counters.requests()].map((o) => [
        `${o.attributes.policy}/${o.attributes.result}`,
        o.value,
      ]),
    );
    expect(totals).toEqual({
      'a/admitted': 2,
      'a/fail-open': 1,
      'b/admitted': 1,
      'b/denied': 1,
      'b/fail-open': 1,
    });
    // a: remaining 0.5 < 1 (10 % of 10); b: remaining 0 on the admitted request.
    expect([...counters.nearLimit()].map((o) => [o.attributes.policy, o.value])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });

  it('keeps one series per limit and transport, whatever array names it', () => {
    const counters = new DecisionCounters();
    for (let i = 0; i < 200; i++)
      counters.count({
        route: 'R',
        transport: i < 100 ? 'http' : 'ws',
        limits: [`limit-${i % 100}`],
        result: 'skipped',
        decisions: [],
      });
    const series = [...counters.requests()];
    expect(series).toHaveLength(200);
    expect(series.every((o) => o.value === 1 && o.attributes.result === 'skipped')).toBe(true);
  });
});

describe('DurationHistogram', () => {
  it('counts values in cumulative buckets: at most each bound, then +Inf', () => {
    const histogram = new DurationHistogram();
    const series = histogram.define({ store: 'redis' });
    for (const seconds of [0.00005, 0.00006, 0.3, 2]) histogram.record(series, seconds);
    const [read] = [...histogram.read()];
    expect(read!.count).toBe(4);
    expect(read!.sum).toBeCloseTo(2.30011, 10);
    expect(read!.buckets[0]).toBe(1); // le 0.00005: the bound itself is in
    expect(read!.buckets[1]).toBe(2); // le 0.0001
    expect(read!.buckets.at(-2)).toBe(3); // le 1
    expect(read!.buckets.at(-1)).toBe(4); // +Inf
  });
});
