import {
  GRADIENT_DEFAULTS,
  initialGradientState,
  queueTerm,
  sampleGradient,
  type GradientLimitOptions,
  type GradientLimitState,
} from './gradient-limit.js';
import { simulate } from './simulation/simulate.js';

const options: GradientLimitOptions = { ...GRADIENT_DEFAULTS, min: 2, max: 50, initial: 10 };

/** `count` calls of `rtt` ms each, one every `gapMs`, each started with `inFlight` in flight. */
function feed(
  state: GradientLimitState,
  count: number,
  sample: {
    rtt: number;
    inFlight: number | ((s: GradientLimitState) => number);
    failed?: boolean;
    gapMs?: number;
  },
  from = state.window.start,
): GradientLimitState {
  let at = from;
  for (let i = 0; i < count; i++) {
    at += sample.gapMs ?? 10;
    const inFlight = typeof sample.inFlight === 'number' ? sample.inFlight : sample.inFlight(state);
    state = sampleGradient(
      state,
      { startedAt: at, endedAt: at + sample.rtt, inFlight, failed: sample.failed ?? false },
      options,
    );
  }
  return state;
}

const adaptive = (controller: GradientLimitOptions) => ({
  controller,
  partitions: [],
  backlog: undefined,
});

describe('gradient limit (pure)', () => {
  it('starts at initial, clamped to [min, max]', () => {
    expect(initialGradientState(options, 0).limit).toBe(10);
    expect(initialGradientState({ ...options, initial: 500 }, 0).limit).toBe(50);
    expect(initialGradientState({ ...options, initial: 0 }, 0).limit).toBe(2);
  });

  it('does not grow a limit the calls never reach, however fast they are', () => {
    const state = feed(initialGradientState(options, 0), 2000, { rtt: 50, inFlight: 3 });
    expect(state.limit).toBe(10);
  });

  it('grows a limit the calls reach while latency stays at its no-load value, up to max', () => {
    const state = feed(initialGradientState(options, 0), 3000, {
      rtt: 50,
      inFlight: (s) => s.limit,
    });
    expect(state.limit).toBe(50);
  });

  it('shrinks on latency, by at most half a window', () => {
    let state = feed(initialGradientState({ ...options, initial: 40 }, 0), 40, {
      rtt: 50,
      inFlight: (s) => s.limit,
    });
    const before = state.limit;
    state = feed(state, 40, { rtt: 500, inFlight: (s) => s.limit }, state.window.start);
    expect(state.limit).toBeLessThan(before);
    expect(state.limit).toBeGreaterThanOrEqual(Math.floor(before / 2) - 1);
  });

  it('shrinks when more than a tenth of the calls fail, whatever the latency', () => {
    let state = feed(initialGradientState({ ...options, initial: 40 }, 0), 20, {
      rtt: 50,
      inFlight: 1,
    });
    const before = state.estimate;
    state = feed(state, 20, { rtt: 50, inFlight: 1, failed: true }, state.window.start);
    expect(state.estimate).toBeLessThan(before);
  });

  it('ignores calls started before the window (they measured the previous limit)', () => {
    const state = initialGradientState(options, 1000);
    expect(
      sampleGradient(
        state,
        { startedAt: 999, endedAt: 1100, inFlight: 10, failed: false },
        options,
      ),
    ).toBe(state);
  });

  it('queue term: log10 of the limit, at least 1', () => {
    expect(queueTerm(1)).toBe(1);
    expect(queueTerm(100)).toBe(2);
  });
});

describe('gradient limit: the anchors’ known failures', () => {
  const controller = { ...options, max: 200 };

  it('no ratchet, no stuck state: a downstream whose no-load latency doubles for good gets its capacity back once it is re-measured', () => {
    const result = simulate({
      durationMs: 120_000,
      capacity: () => 20,
      noLoadMs: (t) => (t < 20_000 ? 50 : 100),
      offeredPerSecond: [800],
      limit: adaptive(controller),
    });
    // Against the old minimum the gradient pins the limit low; the probe re-measures it.
    const late = result.timeline.filter((p) => p.atMs >= 90_000).map((p) => p.limit!);
    for (const limit of late) expect(limit).toBeGreaterThanOrEqual(15);
    for (const limit of late) expect(limit).toBeLessThanOrEqual(25);
  });

  it('recovers after an outage: capacity 1 for 10 s, then 20 again', () => {
    const result = simulate({
      durationMs: 60_000,
      capacity: (t) => (t >= 20_000 && t < 30_000 ? 1 : 20),
      offeredPerSecond: [800],
      limit: adaptive(controller),
    });
    expect(result.timeline.find((p) => p.atMs === 30_000)!.limit).toBeLessThan(15);
    for (const p of result.timeline.filter((p) => p.atMs >= 45_000)) {
      expect(p.limit).toBeGreaterThanOrEqual(15);
      expect(p.limit).toBeLessThanOrEqual(25);
    }
  });

  it('no growth without bound when the offered load sits at the capacity (mild overload)', () => {
    const result = simulate({
      durationMs: 120_000,
      capacity: () => 20,
      offeredPerSecond: [420],
      limit: adaptive(controller),
    });
    for (const p of result.timeline.filter((p) => p.atMs >= 20_000))
      expect(p.limit).toBeLessThanOrEqual(30);
  });
});
