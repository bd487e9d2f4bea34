import { aimdNext, classifyWindow, type AimdParams, type AimdState } from './aimd.js';

const params: AimdParams = {
  min: 10,
  max: 200,
  decrease: 0.8,
  increase: 5,
  failureThreshold: 0.1,
  healthyWindows: 2,
  minOutcomes: 20,
  jitter: 0,
};

const noRandom = (): number => {
  throw new Error('random must not be called');
};

const healthy = { outcomes: 100, failures: 0 };
const bad = { outcomes: 100, failures: 50 };
const sparse = { outcomes: 19, failures: 19 };

describe('classifyWindow', () => {
  it.each([
    [{ outcomes: 0, failures: 0 }, 'neutral'],
    [{ outcomes: 19, failures: 19 }, 'neutral'],
    [{ outcomes: 20, failures: 0 }, 'healthy'],
    [{ outcomes: 20, failures: 2 }, 'healthy'], // exactly the threshold: not above it
    [{ outcomes: 20, failures: 3 }, 'bad'],
    [{ outcomes: 1000, failures: 101 }, 'bad'],
  ] as const)('%o is %s', (window, verdict) => {
    expect(classifyWindow(window, params)).toBe(verdict);
  });

  it('a threshold of 0 makes any failure bad', () => {
    expect(classifyWindow({ outcomes: 20, failures: 1 }, { ...params, failureThreshold: 0 })).toBe(
      'bad',
    );
    expect(classifyWindow({ outcomes: 20, failures: 0 }, { ...params, failureThreshold: 0 })).toBe(
      'healthy',
    );
  });
});

describe('aimdNext', () => {
  const at = (rate: number, healthyStreak = 0): AimdState => ({ rate, healthyStreak });

  it('multiplies the rate by `decrease` on a bad window and resets the streak', () => {
    expect(aimdNext(at(100, 2), bad, params, noRandom)).toEqual(at(80, 0));
  });

  it('never goes below min', () => {
    expect(aimdNext(at(11), bad, params, noRandom)).toEqual(at(10, 0));
    expect(aimdNext(at(10), bad, params, noRandom)).toEqual(at(10, 0));
  });

  it('needs `healthyWindows` healthy windows in a row before growing, then grows on each', () => {
    let state = at(80);
    state = aimdNext(state, healthy, params, noRandom);
    expect(state).toEqual(at(80, 1));
    state = aimdNext(state, healthy, params, noRandom);
    expect(state).toEqual(at(85, 2));
    state = aimdNext(state, healthy, params, noRandom);
    expect(state).toEqual(at(90, 2));
  });

  it('a bad window in between restarts the count', () => {
    let state = aimdNext(at(100), healthy, params, noRandom);
    state = aimdNext(state, bad, params, noRandom);
    state = aimdNext(state, healthy, params, noRandom);
    expect(state).toEqual(at(80, 1));
  });

  it('a neutral window changes nothing, not even the streak (same object back)', () => {
    const state = at(100, 1);
    expect(aimdNext(state, sparse, params, noRandom)).toBe(state);
    expect(aimdNext(aimdNext(state, sparse, params, noRandom), healthy, params, noRandom)).toEqual(
      at(105, 2),
    );
  });

  it('with healthyWindows 1 it is plain AIMD', () => {
    expect(aimdNext(at(100), healthy, { ...params, healthyWindows: 1 }, noRandom)).toEqual(
      at(105, 1),
    );
  });

  it('never goes above max, and holds there', () => {
    expect(aimdNext(at(198, 2), healthy, params, noRandom)).toEqual(at(200, 2));
    const top = at(200, 2);
    expect(aimdNext(top, healthy, params, noRandom)).toBe(top);
  });

  it('jitter scales each step by a factor in [1 - jitter, 1 + jitter)', () => {
    const jittery = { ...params, jitter: 0.1 };
    // random() = 0 → factor 0.9; random() → 1 gives a factor just under 1.1.
    expect(aimdNext(at(100), bad, jittery, () => 0).rate).toBeCloseTo(100 * (1 - 0.2 * 0.9));
    expect(aimdNext(at(100), bad, jittery, () => 0.999999).rate).toBeCloseTo(
      100 * (1 - 0.2 * 1.1),
      4,
    );
    expect(aimdNext(at(100, 2), healthy, jittery, () => 0).rate).toBeCloseTo(104.5);
    expect(aimdNext(at(100, 2), healthy, jittery, () => 0.5).rate).toBeCloseTo(105);
  });

  it('calls random once per step taken and never for a hold', () => {
    let calls = 0;
    const counting = (): number => {
      calls += 1;
      return 0.5;
    };
    const jittery = { ...params, jitter: 0.1 };
    aimdNext(at(100), sparse, jittery, counting); // neutral
    aimdNext(at(100, 0), healthy, jittery, counting); // streak 1: hold
    aimdNext(at(200, 2), healthy, jittery, counting); // at max: hold
    expect(calls).toBe(0);
    aimdNext(at(100), bad, jittery, counting);
    aimdNext(at(100, 2), healthy, jittery, counting);
    expect(calls).toBe(2);
  });

  it('the jittered cut factor stays in (0, 1) even for extreme settings', () => {
    const harsh = { ...params, min: 1e-9, decrease: 0.01, jitter: 0.999 };
    const rate = aimdNext(at(100), bad, harsh, () => 0.999999).rate;
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThan(100);
  });

  it('is pure: does not modify its input state', () => {
    const state = Object.freeze(at(100, 2));
    aimdNext(state, bad, params, noRandom);
    aimdNext(state, healthy, params, noRandom);
    expect(state).toEqual(at(100, 2));
  });
});
