/**
 * Sent to `onRateChange` listeners (and logged) when an adaptive limit's
 * effective rate has moved by at least its `notifyThreshold` since the last
 * notification. Small steps accumulate: `previousRate` is the rate at the last
 * notification (or the declared rate), not necessarily the one just before.
 *
 * @publicApi
 */
export interface AdaptiveRateChange {
  /** The adaptive limit's registered name. */
  readonly name: string;
  /** Rate at the previous notification (the declared rate for the first one), tokens/s. */
  readonly previousRate: number;
  /** New effective rate, tokens/s. */
  readonly rate: number;
  /** New effective burst, tokens. */
  readonly burst: number;
  /** Which way the step that crossed the threshold went. */
  readonly direction: 'increase' | 'decrease';
  /** The window whose verdict made the step. */
  readonly window: {
    /** Window start, module clock milliseconds. */
    readonly startMs: number;
    /** Window end (exclusive), module clock milliseconds. */
    readonly endMs: number;
    readonly outcomes: number;
    /** Failures plus congestion signals. */
    readonly failures: number;
  };
}

/** A listener of {@link AdaptiveRateChange}s. @publicApi */
export type AdaptiveRateListener = (change: AdaptiveRateChange) => void;
