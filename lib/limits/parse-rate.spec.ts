import { parseRate } from './parse-rate.js';

describe('parseRate', () => {
  describe('a number is tokens per second', () => {
    it.each([10, 0.5, 1e-6, 1e9])('%p is taken as it is', (rate) => {
      expect(parseRate(rate)).toBe(rate);
    });

    it.each([0, -0, -1, NaN, Infinity, -Infinity])('%p is not a rate', (rate) => {
      expect(parseRate(rate)).toBeUndefined();
    });
  });

  describe("a string '<n>/<unit>' or '<n>/<k><unit>'", () => {
    it.each([
      ['10/s', 10],
      ['5/ms', 5000],
      ['120/m', 2],
      ['60/min', 1],
      ['3600/h', 1],
      ['86400/d', 1],
      ['100/15min', 100 / 900],
      ['90/1.5min', 1],
      ['1.5/0.5s', 3],
      ['0.5/s', 0.5],
    ])('%p is %p tokens per second', (rate, perSecond) => {
      expect(parseRate(rate)).toBeCloseTo(perSecond, 12);
    });

    it('gives exactly what the declaration says for round cases', () => {
      expect(parseRate('10/s')).toBe(10);
      expect(parseRate('1/h')).toBe(1 / 3600);
      expect(parseRate('100/min')).toBe(100_000 / 60_000);
    });

    it.each([
      ['s', ['s', 'sec', 'secs', 'second', 'seconds'], 1000],
      ['m', ['m', 'min', 'mins', 'minute', 'minutes'], 60_000],
      ['h', ['h', 'hr', 'hour', 'hours'], 3_600_000],
      ['d', ['d', 'day', 'days'], 86_400_000],
    ] as const)('knows every spelling of %p', (_unit, spellings, unitMs) => {
      for (const spelling of spellings)
        expect(parseRate(`1000/${spelling}`)).toBe(1_000_000 / unitMs);
    });

    it('ignores case and whitespace around the parts', () => {
      expect(parseRate('10/S')).toBe(10);
      expect(parseRate('100/Min')).toBe(parseRate('100/min'));
      expect(parseRate('  10 / 15 MINUTES  ')).toBe(parseRate('10/15minutes'));
      expect(parseRate('\t100/15 min\n')).toBe(parseRate('100/15min'));
    });

    it('a multiplier of 1 is the same as none', () => {
      expect(parseRate('100/1min')).toBe(parseRate('100/min'));
    });
  });

  describe('refuses what is not a positive finite rate', () => {
    it.each([
      '',
      '10',
      '10/',
      '/s',
      '10/week',
      '10/seconds2',
      '10 per second',
      '10/s extra',
      '-1/s',
      '1e3/s',
      '.5/s',
      '0/s',
      '0.0/min',
      '10/0s',
      '10/-1s',
    ])('%p', (rate) => {
      expect(parseRate(rate)).toBeUndefined();
    });

    it('a token count or a period too large for a double', () => {
      expect(parseRate(`1${'0'.repeat(400)}/s`)).toBeUndefined(); // Infinity tokens
      expect(parseRate(`1/${'9'.repeat(400)}d`)).toBeUndefined(); // an infinite period: 0 per second
    });

    it.each([null, undefined, {}, ['10/s'], true])(
      'a value that is neither number nor string: %p',
      (rate) => {
        expect(parseRate(rate as never)).toBeUndefined();
      },
    );
  });
});
