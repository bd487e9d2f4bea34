import { effectiveBucket } from './effective-bucket.js';
import { isBadOutcome, type AdaptiveOutcome } from './adaptive-outcome.js';
import { seededRandom } from './seeded-random.js';

describe('effectiveBucket', () => {
  const declared = Object.freeze({ rate: 100, burst: 20 });

  it('returns the declared bucket itself at the declared rate', () => {
    expect(effectiveBucket(declared, 100)).toBe(declared);
  });

  it.each([
    [50, 10],
    [70, 14], // 20 * 0.7 is 13.999999999999998 in doubles
    [200, 40],
    [104, 20], // floored to whole tokens
    [4, 1], // 0.8 of a token: at least 1
    [0.5, 1],
  ])('at %p tokens/s the burst is %p', (rate, burst) => {
    expect(effectiveBucket(declared, rate)).toEqual({ rate, burst });
  });

  it('keeps the refill horizon (burst / rate) of the declared bucket', () => {
    const bucket = effectiveBucket({ rate: 10, burst: 30 }, 5);
    expect(bucket.burst / bucket.rate).toBe(3);
  });

  it('returns frozen objects', () => {
    expect(Object.isFrozen(effectiveBucket(declared, 50))).toBe(true);
  });
});

describe('isBadOutcome', () => {
  it.each<[AdaptiveOutcome, number | undefined, boolean]>([
    ['success', 100, false],
    ['failure', 100, true],
    [{ latencyMs: 100 }, 100, false],
    [{ latencyMs: 100.1 }, 100, true],
    [{ latencyMs: 1e9 }, undefined, false], // no target: latency is ignored
    [{ latencyMs: 0 }, undefined, false],
    [{ latencyMs: 5, failed: true }, 100, true],
    [{ latencyMs: 500, failed: false }, undefined, false],
  ])('%o with target %p is bad: %p', (outcome, target, expected) => {
    expect(isBadOutcome(outcome, target)).toBe(expected);
  });

  it.each<unknown>([
    'fail',
    'FAILURE',
    undefined,
    null,
    503,
    {},
    { latencyMs: -1 },
    { latencyMs: Number.NaN },
    { latencyMs: Number.POSITIVE_INFINITY },
    { latencyMs: '5' },
    { latencyMs: 5, failed: 'yes' },
  ])('rejects %p with a TypeError', (outcome) => {
    expect(() => isBadOutcome(outcome as AdaptiveOutcome, 100)).toThrow(TypeError);
    expect(() => isBadOutcome(outcome as AdaptiveOutcome, 100)).toThrow(
      /Adaptive outcome must be 'success', 'failure' or/,
    );
  });
});

describe('seededRandom', () => {
  it('is reproducible, seed-dependent and within [0, 1)', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(c()).not.toBe(xs[0]);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((sum, x) => sum + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});
