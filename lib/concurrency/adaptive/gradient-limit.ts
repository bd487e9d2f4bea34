/**
 * The adaptive concurrency controller: a pure function of its state, one
 * finished call's measurement and the time, answering the in-flight limit
 * in force. No timers, no I/O: the gate feeds it calls as they end (on the
 * module clock) and reads `limit`.
 *
 * The rule, in the manner of Netflix's Gradient2 with Vegas's queue term,
 * measured per window of calls rather than per call:
 *
 * - a window gathers the calls that *started* in it (so that it measures the
 *   limit in force, not the one before a change) until it holds
 *   `minWindowSamples` of them (or twice the limit, if fewer) and lasts at
 *   least two no-load latencies;
 * - its mean latency `rtt` is compared with `noLoadRtt`, the lowest window
 *   mean seen since the last re-measure (a mean, not a single call: a noisy
 *   downstream's fastest call is not its no-load latency);
 * - `gradient = clamp(tolerance × noLoadRtt / rtt, 0.5, 1)`, and the
 *   target is `limit × gradient + queue(limit)` with `queue = log10(limit)`
 *   (at least 1): with a downstream whose latency grows with the calls
 *   beyond its capacity C, the fixed point is `tolerance × C + queue`
 *   (C = 20: 22.3);
 * - the estimate moves towards the target by `smoothing`.
 *
 * The anchors' known failures, and what this does against each:
 * - a minimum latency that ratchets up (Vegas, Gradient2): `noLoadRtt` is
 *   re-measured every `probeInterval` *while the limit is in use*, by one
 *   window at three quarters of the limit (below the capacity when the limit
 *   sits at its fixed point), replacing the old value whether lower or higher;
 * - growth without bound under mild overload (Gradient2): the limit grows
 *   only in a window whose calls reached it (demand it refused or queued);
 * - never recovering (a downstream whose no-load latency rose for good would
 *   keep the gradient at 0.5 against an old minimum): the same re-measure;
 * - 503s while probing (Envoy drops to its minimum): the probe takes a
 *   quarter off, for one window, and only when the limit is already in use;
 * - slow ramps (Vegas): a window without any queueing (gradient 1) grows by
 *   a fifth of the limit, not by one, and a small limit's window needs only
 *   twice the limit's calls.
 *
 * Failures count too: a window where more than a tenth of the calls failed
 * (the handler threw or timed out) multiplies the limit by
 * `1 - failureRatio / 2` (at most halving it), whatever the latency says.
 */

/** The controller's parameters, validated at start-up. */
export interface GradientLimitOptions {
  readonly min: number;
  readonly max: number;
  readonly initial: number;
  /** Latency over no-load latency tolerated before the limit shrinks (noise, not queueing). @default 1 */
  readonly tolerance: number;
  /** How far each window moves the estimate towards its target. @default 0.2 */
  readonly smoothing: number;
  /** Calls a window needs before it decides. @default 10 */
  readonly minWindowSamples: number;
  /** A window lasts at least this long (milliseconds), and twice the no-load latency. @default 10 */
  readonly minWindowMs: number;
  /** How often the no-load latency is re-measured while the limit is in use (milliseconds). @default 30000 */
  readonly probeIntervalMs: number;
}

export const GRADIENT_DEFAULTS = Object.freeze({
  tolerance: 1.0,
  smoothing: 0.2,
  minWindowSamples: 10,
  minWindowMs: 10,
  probeIntervalMs: 30_000,
});

/** Share of the implied capacity the limit drops to while the no-load latency is probed. */
export const PROBE_FACTOR = 0.8;
/** A probe slower than the window before it by more than this is load, not no-load latency. */
export const PROBE_NOISE = 1.1;
/** A window that moves the estimate by less than this share leaves it steady: a probe may start. */
export const STEADY_CHANGE = 0.05;
/** A window without queueing grows a limit it reached by this share of it (at least the queue term). */
export const GROWTH = 0.2;
/** Share of failed calls in a window above which the limit shrinks for them. */
export const FAILURE_THRESHOLD = 0.1;

/** One finished call, as the gate measured it. */
export interface CallSample {
  readonly startedAt: number;
  readonly endedAt: number;
  /** Calls of the key in flight when this one started, itself included. */
  readonly inFlight: number;
  /** The handler threw, or the call was given up. */
  readonly failed: boolean;
}

interface Window {
  readonly start: number;
  readonly count: number;
  readonly rttSum: number;
  readonly maxInFlight: number;
  readonly failures: number;
}

/** The controller's state: a plain value, replaced by {@link sampleGradient}. */
export interface GradientLimitState {
  /** Fractional estimate the limit is the floor of. */
  readonly estimate: number;
  /** The limit in force: calls allowed in flight (an integer in [min, max]). */
  readonly limit: number;
  /** Lowest window mean latency since `measuredAt`; undefined before the first window. */
  readonly noLoadRtt: number | undefined;
  readonly measuredAt: number;
  readonly window: Window;
  /** During a probe: the estimate to return to when it ends, and the mean latency of the window before it. */
  readonly probe: { readonly resume: number; readonly baseline: number } | undefined;
}

const emptyWindow = (start: number): Window => ({
  start,
  count: 0,
  rttSum: 0,
  maxInFlight: 0,
  failures: 0,
});

export function initialGradientState(
  options: GradientLimitOptions,
  now: number,
): GradientLimitState {
  const estimate = clamp(options.initial, options.min, options.max);
  return {
    estimate,
    limit: Math.floor(estimate),
    noLoadRtt: undefined,
    measuredAt: now,
    window: emptyWindow(now),
    probe: undefined,
  };
}

/**
 * One finished call in, the new state out (the same object when nothing
 * changed but the window's sums). Calls that started before the current
 * window are not counted: they measure a limit no longer in force.
 */
export function sampleGradient(
  state: GradientLimitState,
  sample: CallSample,
  options: GradientLimitOptions,
): GradientLimitState {
  const { window } = state;
  if (sample.startedAt < window.start) return state;
  const rtt = Math.max(0, sample.endedAt - sample.startedAt);
  const counted: Window = {
    start: window.start,
    count: window.count + 1,
    rttSum: window.rttSum + rtt,
    maxInFlight: Math.max(window.maxInFlight, sample.inFlight),
    failures: window.failures + (sample.failed ? 1 : 0),
  };
  const now = sample.endedAt;
  const minMs = Math.max(options.minWindowMs, 2 * (state.noLoadRtt ?? rtt));
  // A small limit yields few calls per round trip: it needs fewer to decide (twice the limit).
  const minSamples = Math.min(options.minWindowSamples, Math.max(2, 2 * state.limit));
  if (counted.count < minSamples || now - window.start < minMs)
    return { ...state, window: counted };
  return closeWindow(state, counted, now, options);
}

function closeWindow(
  state: GradientLimitState,
  window: Window,
  now: number,
  options: GradientLimitOptions,
): GradientLimitState {
  const rtt = window.rttSum / window.count;
  const next = (
    estimate: number,
    noLoadRtt: number,
    measuredAt: number,
    probe?: GradientLimitState['probe'],
  ): GradientLimitState => {
    const bounded = clamp(estimate, options.min, options.max);
    return {
      estimate: bounded,
      limit: Math.floor(bounded),
      noLoadRtt,
      measuredAt,
      window: emptyWindow(now),
      probe,
    };
  };
  if (state.probe !== undefined) return next(state.probe.resume, ...probed(state, rtt, now));
  const noLoadRtt = Math.min(state.noLoadRtt ?? rtt, rtt);
  const measuredAt = state.noLoadRtt === undefined ? now : state.measuredAt;
  const estimate = targetEstimate(state.estimate, rtt, noLoadRtt, window, options);
  const inUse = window.maxInFlight >= state.limit / 2;
  const steady = Math.abs(estimate - state.estimate) < state.estimate * STEADY_CHANGE;
  if (inUse && steady && now - measuredAt >= options.probeIntervalMs) {
    // Below the capacity the fixed point implies (limit = tolerance × C + queue).
    const capacity = (estimate - queueTerm(estimate)) / options.tolerance;
    const probe = Math.max(options.min, Math.floor(capacity * PROBE_FACTOR));
    return next(probe, noLoadRtt, measuredAt, { resume: estimate, baseline: rtt });
  }
  return next(estimate, noLoadRtt, measuredAt);
}

/**
 * A probe's window decides the new no-load latency: its mean, lower or
 * higher than the old, unless it is slower than the window before the probe
 * at a higher limit (the capacity fell during the probe: what it measured is
 * load, not the no-load latency); then the old stands, and is probed again
 * after half an interval.
 */
function probed(state: GradientLimitState, rtt: number, now: number): [number, number] {
  const old = state.noLoadRtt ?? rtt;
  if (rtt <= old || rtt <= state.probe!.baseline * PROBE_NOISE) return [rtt, now];
  return [old, state.measuredAt + (now - state.measuredAt) / 2];
}

/** Where one window moves the estimate: the failures' cut, else the latency gradient (growth only when in use). */
function targetEstimate(
  estimate: number,
  rtt: number,
  noLoadRtt: number,
  window: Window,
  options: GradientLimitOptions,
): number {
  const failureRatio = window.failures / window.count;
  if (failureRatio > FAILURE_THRESHOLD) return estimate * Math.max(0.5, 1 - failureRatio / 2);
  const gradient = rtt <= 0 ? 1 : clamp((options.tolerance * noLoadRtt) / rtt, 0.5, 1);
  // Growth only for a limit the window reached: demand beyond it is what growth would serve.
  const inUse = window.maxInFlight >= Math.floor(estimate);
  if (gradient >= 1) {
    // No queueing: grow only a limit in use, by a fifth (at least the queue term).
    return inUse ? estimate + Math.max(queueTerm(estimate), estimate * GROWTH) : estimate;
  }
  const target = estimate * gradient + queueTerm(estimate);
  const moved = estimate * (1 - options.smoothing) + target * options.smoothing;
  return inUse ? moved : Math.min(moved, estimate);
}

/** Vegas's allowance of calls queued at the downstream: log10 of the limit, at least 1 (20: 1.3, 100: 2). */
export function queueTerm(estimate: number): number {
  return Math.max(1, Math.log10(Math.max(1, estimate)));
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}
