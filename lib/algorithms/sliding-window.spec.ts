import { runWindowScenario, windowScenarios } from '../../test/utils/window-scenarios.js';
import type { SlidingWindowLimit } from '../store/rate-limit-store.interface.js';
import { slidingWaitMs, slidingWindowConsume, slidingWindowPeek } from './sliding-window.js';
import type { WindowState } from './window-state.js';

/** A multiple of the 60 s window. */
const T = 1_700_000_040_000;
const limit: SlidingWindowLimit = { algorithm: 'sliding-window', quota: 10, windowMs: 60_000 };

describe('sliding window: the shared scenario table', () => {
  it.each(
    windowScenarios
      .filter((s) => s.limit.algorithm === 'sliding-window')
      .map((s) => [s.name, s] as const),
  )('%s', (_name, scenario) => runWindowScenario(scenario));
});

describe('sliding window', () => {
  it('a denied request succeeds retryAfterMs later, not 1 ms earlier', () => {
    let state: WindowState | undefined;
    for (let i = 0; i < 10; i++) state = slidingWindowConsume(state, T + i * 1000, limit, 1).state;
    for (const t of [T + 61_000, T + 70_000, T + 75_000]) {
      const denied = slidingWindowConsume(state, t, limit, 3).decision;
      expect(denied.allowed).toBe(false);
      const wait = denied.retryAfterMs;
      expect({
        t: t - T,
        wait,
        at: slidingWindowConsume(state, t + wait, limit, 3).decision.allowed,
      }).toEqual({ t: t - T, wait, at: true });
      expect({
        t: t - T,
        wait,
        before: slidingWindowConsume(state, t + wait - 1, limit, 3).decision.allowed,
      }).toEqual({ t: t - T, wait, before: false });
    }
  });

  it('waits follow the weight into the next window when this one cannot make room', () => {
    // previous 0, current 10 at elapsed 0: one more fits once 1/10 of the current window's weight slid out.
    expect(slidingWaitMs(0, 10, 0, 60_000, 10, 1)).toBeCloseTo(60_000 + 6_000, 6);
    expect(slidingWaitMs(10, 0, 30_000, 60_000, 10, 1)).toBeCloseTo(0, 6); // 5 + 1 <= 10
    expect(slidingWaitMs(10, 5, 30_000, 60_000, 10, 1)).toBeCloseTo(6_000, 6); // 10 (1 - e/W) + 6 <= 10: e = 36 s
    expect(slidingWaitMs(0, 0, 0, 60_000, 10, 11)).toBe(Infinity);
  });

  it('peek charges nothing and reports the estimate', () => {
    const { state } = slidingWindowConsume(undefined, T, limit, 6);
    // One window later: the 6 weigh 1/2 at mid-window.
    expect(slidingWindowPeek(state, T + 90_000, limit)).toMatchObject({
      allowed: true,
      remaining: 7,
    });
  });
});
