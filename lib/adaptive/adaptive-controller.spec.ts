import { AdaptiveController } from './adaptive-controller.js';
import type { AdaptiveOptions } from '../interfaces/adaptive-options.interface.js';
import type { AdaptiveOutcome } from './adaptive-outcome.js';
import type { AdaptiveRateChange } from './adaptive-rate-change.interface.js';
import { resolveAdaptiveOptions } from './resolve-adaptive-options.js';

const declared = { rate: 100, burst: 20 };

function make(options: AdaptiveOptions = {}) {
  const changes: AdaptiveRateChange[] = [];
  const config = resolveAdaptiveOptions({ jitter: 0, max: 200, ...options }, declared, 'test');
  const controller = new AdaptiveController('search', config, (change) => changes.push(change));
  return { controller, changes };
}

/** Record `n` outcomes spread over [fromMs, fromMs + spanMs). */
function feed(
  controller: AdaptiveController,
  outcome: AdaptiveOutcome,
  n: number,
  fromMs: number,
  spanMs = 900,
): void {
  for (let i = 0; i < n; i += 1) controller.record(outcome, fromMs + (i * spanMs) / n);
}

describe('AdaptiveController', () => {
  it('starts at the declared bucket', () => {
    const { controller } = make();
    expect(controller.effective(0)).toBe(controller.config.declared);
    expect(controller.current(0)).toBe(100);
  });

  it('decides only when a window closes, lazily, on the first call at or after its end', () => {
    const { controller } = make();
    controller.effective(0); // first call: window [0, 1000)
    feed(controller, 'failure', 30, 0);
    expect(controller.current(999)).toBe(100);
    expect(controller.current(1000)).toBe(80);
    expect(controller.effective(1000)).toEqual({ rate: 80, burst: 16 });
  });

  it('cuts at most once per window, however many failures it holds', () => {
    const { controller } = make();
    feed(controller, 'failure', 10_000, 0, 999);
    expect(controller.current(1000)).toBe(80);
    expect(controller.current(1999)).toBe(80);
  });

  it('returns the same object while the rate is unchanged (no allocation on the hot path)', () => {
    const { controller } = make();
    feed(controller, 'failure', 30, 0);
    const first = controller.effective(1000);
    expect(controller.effective(1500)).toBe(first);
    feed(controller, 'success', 30, 1000); // healthy streak 1: hold
    expect(controller.effective(2000)).toBe(first);
    feed(controller, 'success', 30, 2000); // streak 2: grow
    expect(controller.effective(3000)).not.toBe(first);
    expect(controller.current(3000)).toBe(82);
  });

  it('grows by `increase` on healthy windows once `healthyWindows` are in a row, up to max', () => {
    const { controller } = make({ increase: 40, healthyWindows: 2 });
    const rates: number[] = [];
    for (let w = 0; w < 6; w += 1) {
      feed(controller, 'success', 20, w * 1000);
      rates.push(controller.current((w + 1) * 1000));
    }
    expect(rates).toEqual([100, 140, 180, 200, 200, 200]);
  });

  it('grows a window below minOutcomes until it can be judged, instead of throwing its outcomes away', () => {
    const { controller } = make({ minOutcomes: 20, increase: 10 });
    feed(controller, 'success', 20, 0); // healthy, streak 1
    feed(controller, 'failure', 19, 1000); // too few to judge yet: the window grows
    expect(controller.current(2000)).toBe(100);
    feed(controller, 'failure', 1, 2000); // 20 outcomes, all bad, over [1000, 3000)
    expect(controller.current(3000)).toBe(80);
  });

  it('judges a window that stays below minOutcomes for 10 intervals neutral: no cut, and a healthy run survives it', () => {
    const { controller } = make({ minOutcomes: 20, increase: 10 });
    feed(controller, 'success', 20, 0); // healthy, streak 1
    for (let i = 1; i <= 10; i += 1) feed(controller, 'failure', 1, i * 1000); // 10 outcomes over 10 intervals
    expect(controller.current(11_000)).toBe(100);
    feed(controller, 'success', 20, 11_000); // streak 2
    expect(controller.current(12_000)).toBe(110);
  });

  it('keeps windows on a fixed grid and skips idle ones', () => {
    const { controller, changes } = make();
    controller.effective(250); // grid: 250, 1250, 2250, ...
    feed(controller, 'failure', 25, 300, 100);
    // Nothing for a long time; the next call closes [250, 1250) only.
    expect(controller.current(10_400)).toBe(80);
    expect(changes[0]?.window).toEqual({ startMs: 250, endMs: 1250, outcomes: 25, failures: 25 });
    // The current window is [10250, 11250): outcomes before 11250 share it.
    feed(controller, 'failure', 25, 10_400, 800);
    expect(controller.current(11_249)).toBe(80);
    expect(controller.current(11_250)).toBe(64);
    expect(changes[1]?.window).toMatchObject({ startMs: 10_250, endMs: 11_250 });
  });

  it('holds its rate across idle periods (empty windows are neutral)', () => {
    const { controller } = make();
    feed(controller, 'failure', 30, 0);
    expect(controller.current(1000)).toBe(80);
    expect(controller.current(3_600_000)).toBe(80);
  });

  it('time going backwards stays in the current window', () => {
    const { controller } = make();
    controller.effective(5000);
    feed(controller, 'failure', 30, 4000, 500);
    expect(controller.current(4000)).toBe(100);
    expect(controller.current(6000)).toBe(80);
  });

  it('counts latency above latencyTargetMs as a congestion signal', () => {
    const { controller } = make({ latencyTargetMs: 200 });
    feed(controller, { latencyMs: 150 }, 80, 0);
    feed(controller, { latencyMs: 250 }, 20, 0); // 20 % > 10 %
    expect(controller.current(1000)).toBe(80);
  });

  it('ignores latency without a target', () => {
    const { controller } = make({ increase: 10, healthyWindows: 1 });
    feed(controller, { latencyMs: 60_000 }, 30, 0);
    expect(controller.current(1000)).toBe(110);
  });

  it('ignores outcomes of requests admitted before the last cut (they describe the old rate)', () => {
    const { controller } = make({ latencyTargetMs: 100 });
    feed(controller, 'failure', 30, 0);
    expect(controller.current(1000)).toBe(80); // cut takes effect at 1000
    // Slow responses and failures of requests admitted at 900, before the cut: stale, ignored.
    for (let t = 1000; t < 1900; t += 30) controller.record({ latencyMs: t - 900 }, t);
    for (let t = 1000; t < 1900; t += 30)
      controller.record({ latencyMs: t - 900, failed: true }, t);
    // Fresh outcomes of requests admitted after the cut: healthy.
    feed(controller, { latencyMs: 10 }, 30, 1100, 800);
    expect(controller.current(2000)).toBe(80); // healthy (streak 1), not a second cut
    // Without a latency the request counts as admitted just now.
    feed(controller, 'failure', 30, 2000);
    expect(controller.current(3000)).toBe(64);
  });

  it('notifies changes of at least notifyThreshold, letting small steps add up', () => {
    const { controller, changes } = make({ increase: 2, healthyWindows: 1, notifyThreshold: 0.05 });
    for (let w = 0; w < 6; w += 1) feed(controller, 'success', 20, w * 1000);
    controller.effective(6000);
    // 102, 104 (< 5 %), 106 (6 % from 100: notified), 108, 110, 112 (5.66 % from 106: notified)
    expect(changes.map((c) => [c.previousRate, c.rate, c.direction])).toEqual([
      [100, 106, 'increase'],
      [106, 112, 'increase'],
    ]);
    expect(changes[0]).toMatchObject({
      name: 'search',
      burst: 21,
      window: { outcomes: 20, failures: 0 },
    });
  });

  it('notifies every change with notifyThreshold 0, and never when the rate is pinned', () => {
    const { controller, changes } = make({ notifyThreshold: 0, min: 80 });
    feed(controller, 'failure', 30, 0);
    feed(controller, 'failure', 30, 1000);
    controller.effective(2000);
    expect(changes.map((c) => [c.previousRate, c.rate, c.direction])).toEqual([
      [100, 80, 'decrease'],
    ]);
  });

  it('is updated before a throwing listener runs', () => {
    const config = resolveAdaptiveOptions({ jitter: 0 }, declared, 'test');
    const controller = new AdaptiveController('x', config, () => {
      throw new Error('listener');
    });
    feed(controller, 'failure', 30, 0);
    expect(() => controller.effective(1000)).toThrow('listener');
    expect(controller.current(1000)).toBe(80);
  });

  it('rejects malformed outcomes without counting them', () => {
    const { controller } = make();
    expect(() => controller.record('fail' as AdaptiveOutcome, 0)).toThrow(TypeError);
  });

  it('jitter with a seeded random is reproducible', () => {
    const run = () => {
      const { controller } = make({ jitter: 0.1, random: seededRandomFrom(3) });
      const rates: number[] = [];
      for (let w = 0; w < 5; w += 1) {
        feed(controller, w % 2 === 0 ? 'failure' : 'success', 30, w * 1000);
        rates.push(controller.current((w + 1) * 1000));
      }
      return rates;
    };
    const first = run();
    expect(run()).toEqual(first);
    expect(first[0]).not.toBe(80); // jittered
    expect(first[0]).toBeGreaterThanOrEqual(78);
    expect(first[0]).toBeLessThanOrEqual(82);
  });
});

describe("AdaptiveController: one key's share of a window (maxKeyShare)", () => {
  /** One window at t = [1000, 1900): `victims` successes over `victimKeys` keys, `attack` failures per attacker key. */
  function window(
    controller: AdaptiveController,
    victims: number,
    victimKeys: number,
    attackers: readonly string[],
    attack: number,
  ): void {
    controller.effective(1000); // opens the window
    const total = victims + attackers.length * attack;
    let t = 1000;
    const step = 900 / total;
    for (let i = 0; i < victims; i++)
      controller.record('success', (t += step), `victim-${i % victimKeys}`);
    for (const key of attackers)
      for (let i = 0; i < attack; i++) controller.record('failure', (t += step), key);
    controller.effective(2000); // closes it
  }

  it('one key failing every request is bounded to maxKeyShare of the window: no cut', () => {
    const { controller } = make(); // failureThreshold 0.1, maxKeyShare 0.05
    window(controller, 60, 1, ['attacker'], 40); // 40 % of the window, counted as max(1, floor(5)) = 5 of 100
    expect(controller.current(2000)).toBe(100);
  });

  it('two keys stay within the threshold, three exceed it (k keys add at most k × maxKeyShare)', () => {
    const two = make().controller;
    window(two, 60, 3, ['a', 'b'], 20);
    expect(two.current(2000)).toBe(100);
    const three = make().controller;
    window(three, 60, 3, ['a', 'b', 'c'], 14); // 3 × floor(0.05 × 102) = 15 of 102 > 10 %
    expect(three.current(2000)).toBe(80);
  });

  it('a window in which one key had every outcome counts in full (a global key, a single client)', () => {
    const { controller } = make();
    window(controller, 0, 1, ['global'], 30);
    expect(controller.current(2000)).toBe(80);
  });

  it('outcomes without a key count in full', () => {
    const { controller } = make();
    controller.effective(1000);
    feed(controller, 'success', 60, 1000);
    feed(controller, 'failure', 40, 1000);
    expect(controller.current(2000)).toBe(80);
  });

  it('maxKeyShare: 1 turns the bound off', () => {
    const { controller } = make({ maxKeyShare: 1 });
    window(controller, 60, 1, ['attacker'], 40);
    expect(controller.current(2000)).toBe(80);
  });

  it('the change event reports the failures as they counted', () => {
    const { controller, changes } = make();
    window(controller, 60, 3, ['a', 'b', 'c'], 14);
    expect(changes[0]?.window).toMatchObject({ outcomes: 102, failures: 15 });
  });
});

describe('AdaptiveController: isServerFailure', () => {
  const result = (status: number) => ({
    error: undefined,
    response: { statusCode: status },
    latencyMs: 5,
    failed: status >= 500,
  });

  it("without it, the transport's verdict counts", () => {
    const { controller } = make();
    controller.effective(1000);
    for (let i = 0; i < 30; i++) controller.recordResult(result(500), 1000 + i);
    expect(controller.current(2000)).toBe(80);
  });

  it("replaces the transport's verdict", () => {
    const { controller } = make({
      isServerFailure: (r) => (r.response as { statusCode: number }).statusCode === 503,
    });
    controller.effective(1000);
    for (let i = 0; i < 30; i++) controller.recordResult(result(500), 1000 + i); // a 500 is not a failure for this limit
    expect(controller.current(2000)).toBe(100);
    for (let i = 0; i < 30; i++) controller.recordResult(result(503), 2000 + i);
    expect(controller.current(3000)).toBe(80);
  });

  it('latency over the target is still a congestion signal', () => {
    const { controller } = make({ latencyTargetMs: 1, isServerFailure: () => false });
    controller.effective(1000);
    for (let i = 0; i < 30; i++) controller.recordResult(result(200), 1000 + 10 * i);
    expect(controller.current(2000)).toBe(80);
  });
});

function seededRandomFrom(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 48271) % 2147483647;
    return x / 2147483647;
  };
}
