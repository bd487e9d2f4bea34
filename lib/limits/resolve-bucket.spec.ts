import { MAX_HORIZON_MS } from '../store/horizon.js';
import { MIN_RATE, resolveBucket } from './resolve-bucket.js';

class Refused extends Error {
  constructor(
    readonly option: string,
    readonly problem: string,
  ) {
    super(`${option} ${problem}`);
  }
}

const fail = (option: string, problem: string): never => {
  throw new Refused(option, problem);
};

/** The rate and burst resolved, or what `fail` was called with. */
function resolve(
  options: Parameters<typeof resolveBucket>[0],
): { rate: number; burst: number } | Refused {
  try {
    const { rate, burst } = resolveBucket(options, fail);
    return { rate, burst };
  } catch (error) {
    if (error instanceof Refused) return error;
    throw error;
  }
}

describe('resolveBucket', () => {
  it('parses the rate and keeps a declared burst as it is', () => {
    expect(resolve({ rate: '100/min', burst: 20 })).toEqual({ rate: 100 / 60, burst: 20 });
    expect(resolve({ rate: 5, burst: 1 })).toEqual({ rate: 5, burst: 1 });
    expect(resolve({ rate: 5, burst: 2.5 })).toEqual({ rate: 5, burst: 2.5 });
    expect(resolve({ rate: 1, burst: 1e6 })).toEqual({ rate: 1, burst: 1e6 });
  });

  describe('a string rate: burst defaults to its count, rounded up, at least 1', () => {
    it.each([
      ['10/s', 10],
      ['100/min', 100],
      ['100/15min', 100],
      ['1/h', 1],
      ['1000/day', 1000],
      ['2.5/s', 3],
      ['0.5/min', 1],
      ['0.7/0.7ms', 1], // 1000 tokens per second, but written as 0.7 at a time
    ])('rate %p: burst %p', (rate, burst) => {
      expect(resolve({ rate })).toEqual({ rate: expect.any(Number), burst });
    });

    it('a count whose bucket spans more than the horizon is refused as a burst', () => {
      // The bucket of a count N refills over the written period.
      expect(resolve({ rate: '5/2000000d' })).toMatchObject({ option: 'burst' });
    });
  });

  describe('a numeric rate: burst defaults to one second of the rate, rounded up, at least 1', () => {
    it.each([
      [10, 10],
      [2.5, 3],
      [0.5, 1],
      [1e-6, 1],
      [1e-11, 1], // below the rounding tolerance: the floor of 1, not 0 (and the smallest rate)
    ])('rate %p: burst %p', (rate, burst) => {
      expect(resolve({ rate })).toEqual({ rate: expect.any(Number), burst });
    });

    it('an explicit undefined (or null) is no burst', () => {
      expect(resolve({ rate: 4, burst: undefined })).toEqual({ rate: 4, burst: 4 });
      expect(resolve({ rate: 4, burst: null as never })).toEqual({ rate: 4, burst: 4 });
    });

    it('a rate a rounding error above a whole number does not add a token', () => {
      // 0.7 tokens per 0.7 ms computes as 1000.0000000000001 per second.
      const rate = (resolve({ rate: '0.7/0.7ms' }) as { rate: number }).rate;
      expect(rate).toBeGreaterThan(1000);
      expect(resolve({ rate })).toEqual({ rate, burst: 1000 });
    });
  });

  describe('refuses a rate that is not positive and finite, naming it and quoting it', () => {
    it.each([
      ['abc', '"abc"'],
      ['10/week', '"10/week"'],
      ['', '""'],
      [0, '0'],
      [-5, '-5'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [undefined, 'undefined'],
      [null, 'null'],
      [true, 'a boolean (true)'],
      [{ per: 'min' }, 'an object'],
    ])('%p', (rate, quoted) => {
      const refused = resolve({ rate: rate as never }) as Refused;
      expect(refused).toBeInstanceOf(Refused);
      expect([refused.option, refused.problem]).toEqual([
        'rate',
        `must be a positive number of tokens per second or a string like '10/s' or '100/15min', got ${quoted}`,
      ]);
    });

    it('before looking at the burst', () => {
      expect((resolve({ rate: 'abc', burst: -1 }) as Refused).option).toBe('rate');
    });
  });

  describe('refuses a burst that is not a finite number >= 1', () => {
    it.each([
      [0.5, '0.5'],
      [0, '0'],
      [-1, '-1'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      // Shown by type: the string '5' (from an environment variable) is not the number 5.
      ['5', '"5"'],
      [true, 'a boolean (true)'],
      [{}, 'an object'],
      [[5], 'an array'],
    ])('%p', (burst, shown) => {
      const refused = resolve({ rate: 10, burst: burst as never });
      expect(refused).toBeInstanceOf(Refused);
      expect([(refused as Refused).option, (refused as Refused).problem]).toEqual([
        'burst',
        `must be a finite number >= 1, got ${shown}`,
      ]);
    });
  });

  describe('refuses a horizon (burst x 1000 / rate ms) beyond MAX_HORIZON_MS, 1e14 ms (issue 15, item 6)', () => {
    it('accepts the largest horizon, at the smallest rate and with a large burst', () => {
      expect(MAX_HORIZON_MS).toBe(1e14);
      expect(MIN_RATE).toBe(1e-11);
      expect(resolve({ rate: MIN_RATE })).toEqual({ rate: 1e-11, burst: 1 });
      expect(resolve({ rate: MIN_RATE, burst: 1 })).toEqual({ rate: 1e-11, burst: 1 });
      expect(resolve({ rate: '1/day', burst: MAX_HORIZON_MS / 86_400_000 })).toEqual({
        rate: 1 / 86_400,
        burst: MAX_HORIZON_MS / 86_400_000,
      });
      expect(resolve({ rate: 1000, burst: 1e14 })).toEqual({ rate: 1000, burst: 1e14 });
    });

    it.each([
      [
        { rate: 5e-324 },
        'rate',
        'must be at least 1e-11 tokens per second (one token per 100000000000000 ms, about 3,169 years), got 5e-324',
      ],
      [
        { rate: 1e-12 },
        'rate',
        'must be at least 1e-11 tokens per second (one token per 100000000000000 ms, about 3,169 years), got 1e-12',
      ],
      [{ rate: '1/3200000day' }, 'rate', /^must be at least 1e-11 tokens per second/],
      [
        { rate: 1e-11, burst: 2 },
        'burst',
        /^x the interval between tokens \(1000 \/ rate = 100000000000000 ms\) must be at most 100000000000000 ms .* got 200000000000000 ms for burst 2; lower the burst or raise the rate$/,
      ],
      [{ rate: '1/day', burst: 1e15 }, 'burst', /got 8\.64e\+22 ms for burst 1000000000000000;/],
      [{ rate: 1e-9, burst: 1e12 }, 'burst', /ms for burst 1000000000000;/],
      [{ rate: 1000, burst: 1e15 }, 'burst', /got 1000000000000000 ms/],
    ])('%j: %s', (options, option, problem) => {
      const refused = resolve(options as never) as Refused;
      expect(refused).toBeInstanceOf(Refused);
      expect(refused.option).toBe(option);
      if (typeof problem === 'string') expect(refused.problem).toBe(problem);
      else expect(refused.problem).toMatch(problem);
    });
  });
});
