import type { AdaptiveOptions } from '../interfaces/adaptive-options.interface.js';
import { seededRandom } from './seeded-random.js';
import {
  ADAPTIVE_DEFAULTS,
  adaptiveConfigDifference,
  resolveAdaptiveOptions,
} from './resolve-adaptive-options.js';

const declared = { rate: 100, burst: 20 };
const where = 'OrdersController.search, limit "search"';

describe('resolveAdaptiveOptions', () => {
  it('fills every default, scaled to the declared rate where it depends on it', () => {
    const config = resolveAdaptiveOptions({}, declared, where);
    expect(config).toEqual({
      declared,
      min: 10,
      max: 100,
      decrease: 0.8,
      increase: 2,
      failureThreshold: 0.1,
      healthyWindows: 2,
      minOutcomes: 20,
      intervalMs: 1000,
      latencyTargetMs: undefined,
      jitter: 0.1,
      random: Math.random,
      notifyThreshold: 0.05,
      maxKeyShare: 0.05,
      isServerFailure: undefined,
    });
    expect(ADAPTIVE_DEFAULTS).toMatchObject({
      decrease: 0.8,
      failureThreshold: 0.1,
      increaseFraction: 0.02,
    });
  });

  it('maxKeyShare defaults to half the failure threshold, whichever it is', () => {
    expect(resolveAdaptiveOptions({ failureThreshold: 0.2 }, declared, where).maxKeyShare).toBe(
      0.1,
    );
    expect(resolveAdaptiveOptions({ failureThreshold: 0 }, declared, where).maxKeyShare).toBe(0);
  });

  it('suggests isServerFailure for a misspelt predicate', () => {
    expect(() =>
      resolveAdaptiveOptions({ isServerFailur: () => true } as AdaptiveOptions, declared, where),
    ).toThrow(
      new TypeError(
        `${where}: adaptive.isServerFailur is not an option (did you mean isServerFailure?)`,
      ),
    );
  });

  it('takes the deprecated isFailure as isServerFailure, but not both', () => {
    const predicate = () => true;
    expect(resolveAdaptiveOptions({ isFailure: predicate }, declared, where)).toEqual(
      resolveAdaptiveOptions({ isServerFailure: predicate }, declared, where),
    );
    expect(resolveAdaptiveOptions({ isFailure: predicate }, declared, where).isServerFailure).toBe(
      predicate,
    );
    expect(() =>
      resolveAdaptiveOptions({ isFailure: predicate, isServerFailure: predicate }, declared, where),
    ).toThrow(
      new TypeError(
        `${where}: adaptive.isFailure is the deprecated name of adaptive.isServerFailure: give only isServerFailure`,
      ),
    );
  });

  it('accepts `true` as "all defaults"', () => {
    expect(resolveAdaptiveOptions(true, declared, where)).toEqual(
      resolveAdaptiveOptions({}, declared, where),
    );
  });

  it('keeps what is given', () => {
    const random = seededRandom(7);
    const options: Required<Omit<AdaptiveOptions, 'isFailure'>> = {
      min: 5,
      max: 500,
      decrease: 0.5,
      increase: 10,
      failureThreshold: 0,
      healthyWindows: 1,
      minOutcomes: 1,
      intervalMs: 250,
      latencyTargetMs: 300,
      jitter: 0,
      random,
      notifyThreshold: 0,
      maxKeyShare: 1,
      isServerFailure: (result) => result.error !== undefined,
    };
    expect(resolveAdaptiveOptions(options, declared, where)).toEqual({ declared, ...options });
  });

  it('allows min = declared rate = max (a limit that cannot move)', () => {
    expect(resolveAdaptiveOptions({ min: 100, max: 100 }, declared, where)).toMatchObject({
      min: 100,
      max: 100,
    });
  });

  it('returns a frozen config with its own copy of the declared bucket', () => {
    const input = { rate: 100, burst: 20, other: 'ignored' };
    const config = resolveAdaptiveOptions({}, input, where);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.declared)).toBe(true);
    expect(config.declared).toEqual({ rate: 100, burst: 20 });
  });

  it.each<[string, unknown, RegExp]>([
    ['min', 0, /adaptive\.min must be a rate > 0 and at most the declared rate \(100\/s\), got 0/],
    ['min', 101, /adaptive\.min .* at most the declared rate/],
    ['min', Number.NaN, /adaptive\.min .*got NaN/],
    ['min', '10', /adaptive\.min .*got "10"$/],
    ['min', true, /adaptive\.min .*got a boolean \(true\)$/],
    ['max', 99, /adaptive\.max .* at least the declared rate \(100\/s\), got 99/],
    ['max', Number.POSITIVE_INFINITY, /adaptive\.max .*got Infinity/],
    ['decrease', 1, /adaptive\.decrease .* in \(0, 1\), got 1/],
    ['decrease', 0, /adaptive\.decrease/],
    ['increase', 0, /adaptive\.increase .* a rate > 0/],
    ['increase', -1, /adaptive\.increase/],
    ['failureThreshold', 1, /adaptive\.failureThreshold .* in \[0, 1\), got 1/],
    ['failureThreshold', -0.1, /adaptive\.failureThreshold/],
    ['healthyWindows', 0, /adaptive\.healthyWindows .* an integer >= 1, got 0/],
    ['healthyWindows', 1.5, /adaptive\.healthyWindows/],
    ['minOutcomes', 0, /adaptive\.minOutcomes .* an integer >= 1/],
    ['intervalMs', 0.5, /adaptive\.intervalMs .* milliseconds >= 1, got 0.5/],
    ['latencyTargetMs', 0, /adaptive\.latencyTargetMs .* milliseconds > 0, got 0/],
    ['latencyTargetMs', null, /adaptive\.latencyTargetMs .*got null/],
    ['jitter', 1, /adaptive\.jitter .* in \[0, 1\)/],
    ['random', 42, /adaptive\.random .* a function/],
    ['notifyThreshold', 2, /adaptive\.notifyThreshold/],
    ['maxKeyShare', 1.5, /adaptive\.maxKeyShare must be a number in \[0, 1\], got 1.5/],
    ['maxKeyShare', -0.1, /adaptive\.maxKeyShare/],
    [
      'isServerFailure',
      'status >= 500',
      /adaptive\.isServerFailure must be a function \(result\) => boolean, got "status >= 500"/,
    ],
    [
      'isFailure',
      'status >= 500',
      /adaptive\.isFailure must be a function \(result\) => boolean, got "status >= 500"/,
    ],
  ])(
    'rejects %s = %p with a TypeError naming the option and the limit',
    (option, value, message) => {
      const call = () =>
        resolveAdaptiveOptions({ [option]: value } as AdaptiveOptions, declared, where);
      expect(call).toThrow(TypeError);
      expect(call).toThrow(message);
      expect(call).toThrow(`${where}: `);
    },
  );

  it('rejects unknown options, so a misspelt one is not silently ignored', () => {
    const call = () => resolveAdaptiveOptions({ maximum: 500 } as AdaptiveOptions, declared, where);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(
      `${where}: adaptive.maximum is not an option (known options: min, max, decrease,`,
    );
  });

  it('suggests the closest option name for a misspelling', () => {
    expect(() => resolveAdaptiveOptions({ mni: 5 } as AdaptiveOptions, declared, where)).toThrow(
      new TypeError(`${where}: adaptive.mni is not an option (did you mean min?)`),
    );
    expect(() =>
      resolveAdaptiveOptions({ latencyTargetMS: 50 } as AdaptiveOptions, declared, where),
    ).toThrow(
      new TypeError(
        `${where}: adaptive.latencyTargetMS is not an option (did you mean latencyTargetMs?)`,
      ),
    );
  });

  it.each([null, false, 'yes', 3, []])('rejects adaptive = %p', (value) => {
    expect(() =>
      resolveAdaptiveOptions(value as unknown as AdaptiveOptions, declared, where),
    ).toThrow(/: adaptive must be true or an options object/);
  });

  it('rejects a declared bucket that cannot be adapted', () => {
    expect(() => resolveAdaptiveOptions({}, { rate: 0, burst: 1 }, where)).toThrow(
      /: rate must .*got 0/,
    );
    expect(() => resolveAdaptiveOptions({}, { rate: 1, burst: 0.5 }, where)).toThrow(
      /: burst must .*got 0.5/,
    );
  });
});

describe('adaptiveConfigDifference', () => {
  const base = resolveAdaptiveOptions({ max: 200 }, declared, where);

  it('is undefined for equal configurations resolved separately', () => {
    expect(
      adaptiveConfigDifference(
        base,
        resolveAdaptiveOptions({ max: 200 }, { ...declared }, 'elsewhere'),
      ),
    ).toBeUndefined();
  });

  it('names the first difference', () => {
    expect(
      adaptiveConfigDifference(
        base,
        resolveAdaptiveOptions({ max: 200, decrease: 0.7 }, declared, where),
      ),
    ).toBe('adaptive.decrease: 0.8 vs 0.7');
    expect(
      adaptiveConfigDifference(
        base,
        resolveAdaptiveOptions({ max: 200 }, { rate: 100, burst: 30 }, where),
      ),
    ).toBe('burst: 20 vs 30');
    expect(
      adaptiveConfigDifference(
        resolveAdaptiveOptions({ random: seededRandom(1) }, declared, where),
        resolveAdaptiveOptions({ random: seededRandom(1) }, declared, where),
      ),
    ).toBe('adaptive.random: two different functions');
  });
});
