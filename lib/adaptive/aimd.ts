/**
 * AIMD (additive increase, multiplicative decrease) as a pure step function:
 * one call per closed evaluation window, state and window in, state out.
 *
 * Nothing here reads a clock, keeps a timer or touches Nest: the controller
 * decides *when* a window is closed, this file decides *what* that window
 * means. Randomness (jitter) comes in as a function, so a seeded generator
 * makes every run reproducible.
 *
 * Units: tokens per second for rates, plain counts for outcomes.
 */

/** What the controller carries from one window to the next. */
export interface AimdState {
  /** Effective refill rate, tokens per second, always within `[min, max]`. */
  readonly rate: number;
  /**
   * Healthy windows in a row so far (capped at `healthyWindows`, which is all
   * that matters). A bad window resets it; a neutral window leaves it alone.
   */
  readonly healthyStreak: number;
}

/** Counts of one closed evaluation window. */
export interface WindowStats {
  /** Outcomes recorded in the window (successes, failures and congestion signals). */
  readonly outcomes: number;
  /** Failures plus congestion signals (latency over target) among them. */
  readonly failures: number;
}

/**
 * How a window is read:
 * - `bad`: enough outcomes and the failure ratio exceeds the threshold;
 * - `healthy`: enough outcomes and the ratio does not exceed it;
 * - `neutral`: too few outcomes to say anything (idle, or nearly so).
 */
export type WindowVerdict = 'healthy' | 'bad' | 'neutral';

/** The parameters the step needs, already validated (see `resolveAdaptiveOptions`). */
export interface AimdParams {
  /** Lower bound of the effective rate, tokens/s. */
  readonly min: number;
  /** Upper bound of the effective rate, tokens/s. */
  readonly max: number;
  /** Multiplier applied on a bad window, in (0, 1). */
  readonly decrease: number;
  /** Tokens/s added on a healthy window (once the streak is long enough). */
  readonly increase: number;
  /** Failure ratio a window must *exceed* to be bad, in [0, 1). */
  readonly failureThreshold: number;
  /** Consecutive healthy windows needed before the rate may grow (>= 1). */
  readonly healthyWindows: number;
  /** Outcomes a window needs to count at all (>= 1). */
  readonly minOutcomes: number;
  /** Relative spread of each step, in [0, 1): 0.1 scales a step by a factor in [0.9, 1.1]. */
  readonly jitter: number;
}

/** Reads one closed window. */
export function classifyWindow(window: WindowStats, params: AimdParams): WindowVerdict {
  if (window.outcomes < params.minOutcomes) return 'neutral';
  return window.failures / window.outcomes > params.failureThreshold ? 'bad' : 'healthy';
}

/**
 * The next state after one closed window.
 *
 * - bad: `rate × decrease` (never below `min`), streak back to 0. Called once
 *   per window, so the rate can never be cut more than once per window.
 * - healthy: the streak grows; once it reaches `healthyWindows`, `rate +
 *   increase` (never above `max`) on this and every following healthy window.
 *   The asymmetry is the hysteresis: one bad window cuts, it takes
 *   `healthyWindows` good ones to start growing again.
 * - neutral: nothing changes, not even the streak, so an idle second neither
 *   earns growth nor breaks a healthy run.
 *
 * `random` (values in [0, 1)) is called only when a step is actually taken and
 * `jitter > 0`, so a seeded sequence is consumed one value per change.
 */
export function aimdNext(
  state: AimdState,
  window: WindowStats,
  params: AimdParams,
  random: () => number,
): AimdState {
  const verdict = classifyWindow(window, params);
  if (verdict === 'neutral') return state;

  if (verdict === 'bad') {
    // Jitter the size of the cut, not the factor itself: (1 - decrease) is
    // at most 1 and the spread is below 1, so the factor stays in (0, 1).
    const cut = (1 - params.decrease) * spread(params.jitter, random);
    return { rate: Math.max(params.min, state.rate * (1 - cut)), healthyStreak: 0 };
  }

  const healthyStreak = Math.min(state.healthyStreak + 1, params.healthyWindows);
  if (healthyStreak < params.healthyWindows || state.rate >= params.max) {
    return healthyStreak === state.healthyStreak ? state : { rate: state.rate, healthyStreak };
  }
  const step = params.increase * spread(params.jitter, random);
  return { rate: Math.min(params.max, state.rate + step), healthyStreak };
}

/** A factor in [1 - jitter, 1 + jitter); exactly 1 without jitter (and without calling `random`). */
function spread(jitter: number, random: () => number): number {
  return jitter === 0 ? 1 : 1 + jitter * (2 * random() - 1);
}
