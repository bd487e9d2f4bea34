import type { BucketLimit } from '../algorithms/gcra.js';
import { describeValue, optionError } from '../errors/option-error.js';
import { rejectUnknownOptions } from '../errors/unknown-options.js';
import type {
  AdaptiveHandlerResult,
  AdaptiveOptions,
} from '../interfaces/adaptive-options.interface.js';
import type { AimdParams } from './aimd.js';

/**
 * An adaptive limit's configuration after defaults and validation: what
 * `AdaptiveRateProvider.register` and `AdaptiveController` take.
 *
 * @publicApi
 */
export interface AdaptiveConfig extends AimdParams {
  /** The limit as declared (`rate`, `burst`): the starting point, and the reference for the burst. */
  readonly declared: BucketLimit;
  /** Evaluation window, milliseconds. */
  readonly intervalMs: number;
  /** Latency over which a served request is a congestion signal; `undefined` ignores latency. */
  readonly latencyTargetMs: number | undefined;
  /** Randomness for jitter, values in [0, 1). */
  readonly random: () => number;
  /** Relative change from the last notified rate that triggers a log line and an event. */
  readonly notifyThreshold: number;
  /** Largest share of a window's outcomes one key's failures may make up, in [0, 1]. */
  readonly maxKeyShare: number;
  /**
   * Replaces the transport's verdict on a handler's call; `undefined` keeps it
   * (`adaptive.isServerFailure`, or its deprecated name `adaptive.isFailure`).
   */
  readonly isServerFailure: ((result: AdaptiveHandlerResult) => boolean) | undefined;
}

/**
 * Defaults that do not depend on the declared limit. `min` (declared rate /
 * 10), `max` (declared rate) and `increase` (declared rate × 0.02) do, and
 * `maxKeyShare` (failureThreshold / 2) depends on another option; they are
 * computed by {@link resolveAdaptiveOptions}. `docs/adaptive.md` explains the
 * choice against the simulation.
 *
 * @publicApi
 */
export const ADAPTIVE_DEFAULTS = Object.freeze({
  /** `min` = declared rate × this. */
  minFraction: 0.1,
  /** `increase` = declared rate × this. */
  increaseFraction: 0.02,
  decrease: 0.8,
  failureThreshold: 0.1,
  healthyWindows: 2,
  minOutcomes: 20,
  intervalMs: 1000,
  jitter: 0.1,
  notifyThreshold: 0.05,
  /** `maxKeyShare` = `failureThreshold` × this: one key, or two, cannot make a window bad alone. */
  keyShareOfThreshold: 0.5,
});

/** The options, which are also the config's scalar fields (compared by `sameAdaptiveConfig`). */
const CONFIG_SCALARS = [
  'min',
  'max',
  'decrease',
  'increase',
  'failureThreshold',
  'healthyWindows',
  'minOutcomes',
  'intervalMs',
  'latencyTargetMs',
  'jitter',
  'random',
  'notifyThreshold',
  'maxKeyShare',
  'isServerFailure',
] as const satisfies readonly (keyof AdaptiveConfig & keyof AdaptiveOptions)[];

/**
 * Every option `adaptive` accepts: a misspelt one is an error, not ignored.
 * `isFailure`: the deprecated name of `isServerFailure`.
 */
const KNOWN_OPTIONS: readonly string[] = [...CONFIG_SCALARS, 'isFailure'];

/**
 * Apply defaults to an `adaptive` option and validate it, once, at start-up.
 *
 * @param options `true` (all defaults) or the user's {@link AdaptiveOptions}.
 * @param declared the limit's declared `rate` (tokens/s) and `burst`, already parsed.
 * @param where names the limit in error messages, e.g. `limit "search" on OrdersController.search`.
 * @throws TypeError naming the option and `where` when anything is out of range,
 *   of the wrong type, or unknown (a misspelt option is an error, not ignored).
 *
 * @publicApi
 */
export function resolveAdaptiveOptions(
  options: AdaptiveOptions | true,
  declared: BucketLimit,
  where: string,
): AdaptiveConfig {
  const fail = (option: string, expected: string, got: unknown): never => {
    throw optionError(where, option, `must be ${expected}, got ${describeValue(got)}`);
  };

  if (!(typeof declared.rate === 'number' && Number.isFinite(declared.rate) && declared.rate > 0)) {
    fail('rate', 'a finite number of tokens per second > 0', declared.rate);
  }
  if (!(
    typeof declared.burst === 'number' &&
    Number.isFinite(declared.burst) &&
    declared.burst >= 1
  )) {
    fail('burst', 'a finite number >= 1', declared.burst);
  }

  const opts: AdaptiveOptions =
    options === true
      ? {}
      : typeof options === 'object' && options !== null && !Array.isArray(options)
        ? options
        : fail('adaptive', 'true or an options object', options);
  rejectUnknownOptions(where, opts, KNOWN_OPTIONS, 'adaptive.');

  const number = (
    name: keyof AdaptiveOptions,
    fallback: number,
    ok: (v: number) => boolean,
    expected: string,
  ): number => {
    // Only `undefined` means "left out": a null is a mistake worth reporting.
    const given: unknown = opts[name];
    const value = given === undefined ? fallback : given;
    if (typeof value !== 'number' || !Number.isFinite(value) || !ok(value))
      fail(`adaptive.${name}`, expected, value);
    return value as number;
  };
  const integer = (name: keyof AdaptiveOptions, fallback: number): number =>
    number(name, fallback, (v) => Number.isSafeInteger(v) && v >= 1, 'an integer >= 1');
  const fraction = (name: keyof AdaptiveOptions, fallback: number): number =>
    number(name, fallback, (v) => v >= 0 && v < 1, 'a number in [0, 1)');

  const rate = declared.rate;
  const min = number(
    'min',
    rate * ADAPTIVE_DEFAULTS.minFraction,
    (v) => v > 0 && v <= rate,
    `a rate > 0 and at most the declared rate (${rate}/s)`,
  );
  const max = number(
    'max',
    rate,
    (v) => v >= rate,
    `a rate at least the declared rate (${rate}/s)`,
  );
  const decrease = number(
    'decrease',
    ADAPTIVE_DEFAULTS.decrease,
    (v) => v > 0 && v < 1,
    'a number in (0, 1)',
  );
  const increase = number(
    'increase',
    rate * ADAPTIVE_DEFAULTS.increaseFraction,
    (v) => v > 0,
    'a rate > 0 (tokens/s added per healthy window)',
  );
  const failureThreshold = fraction('failureThreshold', ADAPTIVE_DEFAULTS.failureThreshold);
  const healthyWindows = integer('healthyWindows', ADAPTIVE_DEFAULTS.healthyWindows);
  const minOutcomes = integer('minOutcomes', ADAPTIVE_DEFAULTS.minOutcomes);
  const intervalMs = number(
    'intervalMs',
    ADAPTIVE_DEFAULTS.intervalMs,
    (v) => v >= 1,
    'a number of milliseconds >= 1',
  );
  const jitter = fraction('jitter', ADAPTIVE_DEFAULTS.jitter);
  const notifyThreshold = fraction('notifyThreshold', ADAPTIVE_DEFAULTS.notifyThreshold);
  const maxKeyShare = number(
    'maxKeyShare',
    failureThreshold * ADAPTIVE_DEFAULTS.keyShareOfThreshold,
    (v) => v >= 0 && v <= 1,
    'a number in [0, 1]',
  );
  // `isFailure`: the deprecated name (the caller says so in the log), not both.
  if (opts.isFailure !== undefined && opts.isServerFailure !== undefined)
    throw optionError(
      where,
      'adaptive.isFailure',
      'is the deprecated name of adaptive.isServerFailure: give only isServerFailure',
    );
  const predicateName = opts.isFailure === undefined ? 'isServerFailure' : 'isFailure';
  const givenPredicate: unknown = opts.isServerFailure ?? opts.isFailure;
  const isServerFailure =
    givenPredicate === undefined || typeof givenPredicate === 'function'
      ? (givenPredicate as ((result: AdaptiveHandlerResult) => boolean) | undefined)
      : fail(`adaptive.${predicateName}`, 'a function (result) => boolean', givenPredicate);

  let latencyTargetMs: number | undefined;
  if (opts.latencyTargetMs !== undefined) {
    latencyTargetMs = number('latencyTargetMs', 0, (v) => v > 0, 'a number of milliseconds > 0');
  }
  const givenRandom: unknown = opts.random === undefined ? Math.random : opts.random;
  const random =
    typeof givenRandom === 'function'
      ? (givenRandom as () => number)
      : fail('adaptive.random', 'a function returning numbers in [0, 1)', givenRandom);

  return Object.freeze({
    declared: Object.freeze({ rate, burst: declared.burst }),
    min,
    max,
    decrease,
    increase,
    failureThreshold,
    healthyWindows,
    minOutcomes,
    intervalMs,
    latencyTargetMs,
    jitter,
    random,
    notifyThreshold,
    maxKeyShare,
    isServerFailure,
  });
}

/**
 * The first difference between two resolved configurations, as
 * `"<option>: <a> vs <b>"`, or `undefined` when they describe the same
 * adaptive limit (same declared bucket, same parameters, same `random` function).
 *
 * @internal
 */
export function adaptiveConfigDifference(a: AdaptiveConfig, b: AdaptiveConfig): string | undefined {
  if (a === b) return undefined;
  if (a.declared.rate !== b.declared.rate) return `rate: ${a.declared.rate} vs ${b.declared.rate}`;
  if (a.declared.burst !== b.declared.burst)
    return `burst: ${a.declared.burst} vs ${b.declared.burst}`;
  for (const key of CONFIG_SCALARS) {
    const [x, y] = [a[key], b[key]];
    if (Object.is(x, y)) continue;
    return typeof x === 'function' && typeof y === 'function'
      ? `adaptive.${key}: two different functions`
      : `adaptive.${key}: ${describeValue(x)} vs ${describeValue(y)}`;
  }
  return undefined;
}
