import { runWindowScenario, windowScenarios } from '../../test/utils/window-scenarios.js';
import type { FixedWindowLimit } from '../store/rate-limit-store.interface.js';
import { fixedWindowBounds, fixedWindowConsume, fixedWindowPeek } from './fixed-window.js';
import type { WindowState } from './window-state.js';
import { windowRefund } from './window-state.js';

/** A multiple of the 60 s window. */
const T = 1_700_000_040_000;
const limit: FixedWindowLimit = { algorithm: 'fixed-window', quota: 3, windowMs: 60_000 };

describe('fixed window: the shared scenario table', () => {
  it.each(
    windowScenarios
      .filter((s) => s.limit.algorithm === 'fixed-window')
      .map((s) => [s.name, s] as const),
  )('%s', (_name, scenario) => runWindowScenario(scenario));
});

describe('fixed window', () => {
  it('aligns windows on multiples of windowMs since the epoch', () => {
    expect(fixedWindowBounds(T + 61_234, limit)).toEqual({ start: T + 60_000, end: T + 120_000 });
  });

  it('never admits more than the quota in a window, whatever the costs (random trace)', () => {
    let state: WindowState | undefined;
    const admitted = new Map<number, number>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let t = T; t < T + 600_000; t += Math.floor(random() * 500)) {
      const cost = 1 + Math.floor(random() * 2);
      const outcome = fixedWindowConsume(state, t, limit, cost);
      if (!outcome.decision.allowed) continue;
      state = outcome.state;
      const window = Math.floor(t / 60_000);
      admitted.set(window, (admitted.get(window) ?? 0) + cost);
    }
    expect(Math.max(...admitted.values())).toBe(3);
  });

  it('a denied request can succeed exactly retryAfterMs later, not 1 ms earlier', () => {
    const full = fixedWindowConsume(undefined, T + 10, limit, 3).state;
    const denied = fixedWindowConsume(full, T + 20, limit, 1).decision;
    expect(denied.allowed).toBe(false);
    expect(
      fixedWindowConsume(full, T + 20 + denied.retryAfterMs - 1, limit, 1).decision.allowed,
    ).toBe(false);
    expect(fixedWindowConsume(full, T + 20 + denied.retryAfterMs, limit, 1).decision.allowed).toBe(
      true,
    );
  });

  it('peek charges nothing; a refund gives back to the stored window, never below 0', () => {
    const { state } = fixedWindowConsume(undefined, T, limit, 2);
    expect(fixedWindowPeek(state, T + 1, limit)).toMatchObject({
      allowed: true,
      remaining: 1,
      resetMs: 59_999,
    });
    const refunded = windowRefund(state, T + 1, 1);
    expect(refunded).toMatchObject({ count: 1 });
    expect(windowRefund(refunded, T + 1, 5)).toBeUndefined(); // nothing left counted: the key can go
    expect(windowRefund(state, T + 60_000, 1)).toBeUndefined(); // the window is over
  });

  it('an empty window reports resetMs 0 and its end as the effective window', () => {
    expect(fixedWindowPeek(undefined, T + 15_000, limit)).toEqual({
      allowed: true,
      remaining: 3,
      retryAfterMs: 0,
      resetMs: 0,
      effectiveWindowMs: 45_000,
    });
  });
});
