import { parseDictionary, parseList } from 'structured-headers';
import { admitted, denied, limit } from '../../test/utils/header-fixtures.js';
import {
  draft6Headers,
  draft7Headers,
  legacyHeaders,
  numericPolicyHeader,
} from './single-limit-headers.js';

const names = (pairs: readonly (readonly [string, string])[]) => pairs.map(([name]) => name);

describe('legacyHeaders (X-RateLimit-*)', () => {
  it('limit (whole burst), remaining, reset (seconds until full, rounded up) of a single limit', () => {
    const pairs = legacyHeaders([limit('default', 1, 10)], [admitted(7, 3000)]);
    expect(pairs).toEqual([
      ['x-ratelimit-limit', '10'],
      ['x-ratelimit-remaining', '7'],
      ['x-ratelimit-reset', '3'],
    ]);
  });

  it('reset: 0 when full, rounded up otherwise, without adding a second for a rounding error', () => {
    const reset = (resetMs: number) =>
      legacyHeaders([limit('a', 1, 10)], [admitted(5, resetMs)])[2]![1];
    expect(reset(0)).toBe('0');
    expect(reset(1)).toBe('1');
    expect(reset(1000)).toBe('1');
    expect(reset(1500)).toBe('2');
    expect(reset(1000.0000000000001)).toBe('1');
  });

  it('limit is the whole part of the burst', () => {
    expect(legacyHeaders([limit('a', 1, 2.5)], [admitted(2, 500)])[0]).toEqual([
      'x-ratelimit-limit',
      '2',
    ]);
  });

  it('reports the limit with the fewest tokens left', () => {
    const pairs = legacyHeaders(
      [limit('wide', 10, 100), limit('narrow', 1, 5)],
      [admitted(90, 1000), admitted(2, 3000)],
    );
    expect(pairs).toEqual([
      ['x-ratelimit-limit', '5'],
      ['x-ratelimit-remaining', '2'],
      ['x-ratelimit-reset', '3'],
    ]);
  });

  it('a tie on tokens goes to the longest refill; a full tie to the first', () => {
    const limits = [limit('a', 1, 5), limit('b', 1, 6), limit('c', 1, 7)];
    expect(
      legacyHeaders(limits, [admitted(0, 2000), admitted(0, 4000), admitted(0, 3000)])[0],
    ).toEqual(['x-ratelimit-limit', '6']);
    expect(
      legacyHeaders(limits, [admitted(1, 2000), admitted(1, 2000), admitted(1, 2000)])[0],
    ).toEqual(['x-ratelimit-limit', '5']);
  });
});

describe('numericPolicyHeader (draft -06/-07 RateLimit-Policy, as express-rate-limit writes it)', () => {
  it('a List of Integers (the quota) with a w parameter, one member per limit', () => {
    const value = numericPolicyHeader([
      limit('burst', 10, 20),
      limit('daily', 1000 / 86_400, 1000),
    ]);
    expect(value).toBe('20;w=2, 1000;w=86400');
    const parsed = parseList(value);
    expect(parsed.map(([item, params]) => [item, params.get('w')])).toEqual([
      [20, 2],
      [1000, 86_400],
    ]);
  });
});

describe("draft6Headers ('draft-6')", () => {
  it('RateLimit-Policy, then RateLimit-Limit / -Remaining / -Reset of the most restrictive limit', () => {
    const pairs = draft6Headers(
      [limit('wide', 10, 100), limit('narrow', 1, 5)],
      [admitted(90, 1000), admitted(2, 2500)],
    );
    expect(pairs).toEqual([
      ['ratelimit-policy', '100;w=10, 5;w=5'],
      ['ratelimit-limit', '5'],
      ['ratelimit-remaining', '2'],
      ['ratelimit-reset', '3'],
    ]);
  });

  it('a denial: remaining 0, reset the seconds until the bucket is full again (never earlier than the quota is back)', () => {
    const pairs = draft6Headers([limit('default', 1, 10)], [denied(1000, 10_000)]);
    expect(names(pairs)).toEqual([
      'ratelimit-policy',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
    ]);
    expect(pairs[2]).toEqual(['ratelimit-remaining', '0']);
    expect(pairs[3]).toEqual(['ratelimit-reset', '10']);
  });
});

describe("draft7Headers ('draft-7')", () => {
  it('RateLimit-Policy and one RateLimit Dictionary (limit, remaining, reset) for the most restrictive limit', () => {
    const pairs = draft7Headers(
      [limit('wide', 10, 100), limit('narrow', 1, 5)],
      [admitted(90, 1000), admitted(2, 2500)],
    );
    expect(pairs).toEqual([
      ['ratelimit-policy', '100;w=10, 5;w=5'],
      ['ratelimit', 'limit=5, remaining=2, reset=3'],
    ]);
    const fields = parseDictionary(pairs[1]![1]);
    expect([...fields].map(([key, [value]]) => [key, value])).toEqual([
      ['limit', 5],
      ['remaining', 2],
      ['reset', 3],
    ]);
  });
});
