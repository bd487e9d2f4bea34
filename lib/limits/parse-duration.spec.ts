import { parseDuration } from './parse-duration.js';

describe('parseDuration', () => {
  it.each([
    [500, 500],
    ['500ms', 500],
    ['15min', 900_000],
    ['1h', 3_600_000],
    [' 2 d ', 172_800_000],
    ['1.5s', 1500],
  ])('%j is %d ms', (value, ms) => {
    expect(parseDuration(value)).toBe(ms);
  });

  it.each([
    0,
    -1,
    NaN,
    Infinity,
    '',
    '15',
    'min',
    '15 fortnights',
    '-1s',
    true,
    null,
    undefined,
    {},
  ])('%j is not a duration', (value) => {
    expect(parseDuration(value)).toBeUndefined();
  });
});
