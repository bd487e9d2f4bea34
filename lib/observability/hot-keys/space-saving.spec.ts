import { SpaceSaving } from './space-saving.js';
import { seededRandom } from '../../adaptive/seeded-random.js';

/** A Zipf-like stream over `universe` items: item i drawn with weight 1/(i+1). */
function zipfStream(length: number, universe: number, seed: number): string[] {
  const random = seededRandom(seed);
  const weights = Array.from({ length: universe }, (_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const stream: string[] = [];
  for (let n = 0; n < length; n++) {
    let pick = random() * total;
    let i = 0;
    while (pick > weights[i]! && i < universe - 1) pick -= weights[i++]!;
    stream.push(`caller-${i}`);
  }
  return stream;
}

describe('SpaceSaving', () => {
  it('counts exactly while it has room', () => {
    const summary = new SpaceSaving(3);
    for (const item of ['a', 'b', 'a', 'c', 'a', 'b']) summary.add(item);
    expect(summary.top()).toEqual([
      { item: 'a', count: 3, overcount: 0 },
      { item: 'b', count: 2, overcount: 0 },
      { item: 'c', count: 1, overcount: 0 },
    ]);
    expect(summary.uncountedBound).toBe(1);
  });

  it('a new item replaces the least counted one and inherits its count as overcount', () => {
    const summary = new SpaceSaving(2);
    for (const item of ['a', 'a', 'a', 'b', 'c']) summary.add(item);
    expect(summary.top()).toEqual([
      { item: 'a', count: 3, overcount: 0 },
      { item: 'c', count: 2, overcount: 1 },
    ]);
  });

  it('on a skewed stream of 100,000 over 10,000 callers with 50 counters: every true count within [count - overcount, count], every heavy hitter found', () => {
    const stream = zipfStream(100_000, 10_000, 7);
    const exact = new Map<string, number>();
    const summary = new SpaceSaving(50);
    for (const item of stream) {
      exact.set(item, (exact.get(item) ?? 0) + 1);
      summary.add(item);
    }
    expect(summary.size).toBe(50);
    for (const { item, count, overcount } of summary.top()) {
      const truth = exact.get(item)!;
      expect(truth).toBeLessThanOrEqual(count);
      expect(truth).toBeGreaterThanOrEqual(count - overcount);
    }
    const counted = new Set(summary.top().map(({ item }) => item));
    const heavy = [...exact]
      .filter(([, count]) => count > stream.length / 50)
      .map(([item]) => item);
    expect(heavy.length).toBeGreaterThan(3);
    for (const item of heavy) expect(counted).toContain(item);
    // The true top 5 are the summary's top 5, in order.
    const trueTop = [...exact]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([item]) => item);
    expect(summary.top(5).map(({ item }) => item)).toEqual(trueTop);
  });

  it('a flood of distinct callers keeps its size and lets a real heavy hitter stay on top', () => {
    const summary = new SpaceSaving(10);
    for (let i = 0; i < 50_000; i++) {
      summary.add(`flood-${i}`);
      if (i % 10 === 0) summary.add('attacker');
    }
    expect(summary.size).toBe(10);
    expect(summary.top(1)[0]!.item).toBe('attacker');
  });

  it('clear() empties it', () => {
    const summary = new SpaceSaving(2);
    summary.add('a');
    summary.clear();
    expect([summary.size, summary.top(), summary.uncountedBound]).toEqual([0, [], 0]);
  });
});
