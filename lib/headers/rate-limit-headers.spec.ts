import type { RateLimitDecision } from '../algorithms/gcra.js';
import { legacyHeaders, policyHeader, rateLimitHeader, retryAfterSeconds, type HeaderLimit } from './rate-limit-headers.js';

const limit = (name: string, rate: number, burst: number): HeaderLimit => ({ name, rate, burst });
const admitted = (remaining: number, resetMs: number): RateLimitDecision => ({ allowed: true, remaining, retryAfterMs: 0, resetMs });
const denied = (retryAfterMs: number, resetMs = 0, remaining = 0): RateLimitDecision => ({
  allowed: false,
  remaining,
  retryAfterMs,
  resetMs,
  reason: Number.isFinite(retryAfterMs) ? 'limit' : 'cost-exceeds-burst',
});

describe('policyHeader (RateLimit-Policy)', () => {
  it('no limits: an empty value', () => {
    expect(policyHeader([])).toBe('');
  });

  it('q is the burst, w the seconds to refill all of it', () => {
    expect(policyHeader([limit('default', 1, 10)])).toBe('"default";q=10;w=10');
    expect(policyHeader([limit('per-min', 100 / 60, 100)])).toBe('"per-min";q=100;w=60');
    expect(policyHeader([limit('hourly', 1 / 3600, 5)])).toBe('"hourly";q=5;w=18000');
  });

  it('w rounds up, to at least 1 s', () => {
    expect(policyHeader([limit('a', 3, 10)])).toBe('"a";q=10;w=4'); // 3.33 s
    expect(policyHeader([limit('a', 100, 10)])).toBe('"a";q=10;w=1'); // 0.1 s
    expect(policyHeader([limit('a', 1e9, 1)])).toBe('"a";q=1;w=1');
  });

  it('w does not round a rounding error up to one more second', () => {
    // 1000 / 0.9999999999999999 ms is 1000.0000000000001 ms: 1 s, not 2.
    expect(policyHeader([limit('a', 0.9999999999999999, 1)])).toBe('"a";q=1;w=1');
  });

  it('q is the whole part of a fractional burst', () => {
    expect(policyHeader([limit('a', 1, 2.5)])).toBe('"a";q=2;w=3');
  });

  it('one member per limit, in order, separated by ", "', () => {
    expect(policyHeader([limit('burst', 10, 20), limit('daily', 1000 / 86_400, 1000)])).toBe('"burst";q=20;w=2, "daily";q=1000;w=86400');
  });
});

describe('rateLimitHeader (RateLimit)', () => {
  const perSecond = limit('default', 1, 10); // one token per 1000 ms

  it('r is the whole tokens remaining, t 0 while one is left', () => {
    expect(rateLimitHeader([perSecond], [admitted(9, 1000)])).toBe('"default";r=9;t=0');
    expect(rateLimitHeader([perSecond], [admitted(1, 9000)])).toBe('"default";r=1;t=0');
  });

  it('empty: t is the seconds until the next token, rounded up', () => {
    // Full again in resetMs; the first token is back (burst - 1) tokens before that.
    expect(rateLimitHeader([perSecond], [admitted(0, 10_000)])).toBe('"default";r=0;t=1');
    expect(rateLimitHeader([perSecond], [denied(500, 9500)])).toBe('"default";r=0;t=1');
    expect(rateLimitHeader([perSecond], [denied(1001, 10_001)])).toBe('"default";r=0;t=2');
    expect(rateLimitHeader([limit('slow', 0.1, 1)], [denied(10_000, 10_000)])).toBe('"slow";r=0;t=10');
  });

  it('t is 0 when the next token is due now', () => {
    expect(rateLimitHeader([perSecond], [denied(1, 9000)])).toBe('"default";r=0;t=0');
  });

  it('t is about the next token, not the retry of a larger cost', () => {
    // A cost-5 request waits 4 s more, yet a token is back in 1 s.
    expect(rateLimitHeader([perSecond], [denied(4000, 10_000)])).toBe('"default";r=0;t=1');
    expect(rateLimitHeader([perSecond], [denied(Infinity, 10_000)])).toBe('"default";r=0;t=1');
  });

  it('t does not round a rounding error up to one more second', () => {
    // 0.3 tokens per second, burst 2: the next token 1000.0000000000005 ms away.
    expect(rateLimitHeader([limit('a', 0.3, 2)], [denied(1000, 1000 + 1000 / 0.3)])).toBe('"a";r=0;t=1');
  });

  it('one member per limit, in order', () => {
    expect(rateLimitHeader([perSecond, limit('hourly', 1 / 3600, 100)], [admitted(3, 7000), denied(3_600_000, 360_000_000)])).toBe(
      '"default";r=3;t=0, "hourly";r=0;t=3600',
    );
  });
});

describe('legacyHeaders (X-RateLimit-*)', () => {
  const names = (pairs: readonly (readonly [string, string])[]) => pairs.map(([name]) => name);

  it('limit (whole burst), remaining, reset (seconds until full, rounded up) of a single limit', () => {
    const pairs = legacyHeaders([limit('default', 1, 10)], [admitted(7, 3000)]);
    expect(pairs).toEqual([
      ['X-RateLimit-Limit', '10'],
      ['X-RateLimit-Remaining', '7'],
      ['X-RateLimit-Reset', '3'],
    ]);
    expect(names(pairs)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
  });

  it('reset: 0 when full, rounded up otherwise, without adding a second for a rounding error', () => {
    const reset = (resetMs: number) => legacyHeaders([limit('a', 1, 10)], [admitted(5, resetMs)])[2]![1];
    expect(reset(0)).toBe('0');
    expect(reset(1)).toBe('1');
    expect(reset(1000)).toBe('1');
    expect(reset(1500)).toBe('2');
    expect(reset(1000.0000000000001)).toBe('1');
  });

  it('limit is the whole part of the burst', () => {
    expect(legacyHeaders([limit('a', 1, 2.5)], [admitted(2, 500)])[0]).toEqual(['X-RateLimit-Limit', '2']);
  });

  it('reports the limit with the fewest tokens left', () => {
    const pairs = legacyHeaders([limit('wide', 10, 100), limit('narrow', 1, 5)], [admitted(90, 1000), admitted(2, 3000)]);
    expect(pairs).toEqual([
      ['X-RateLimit-Limit', '5'],
      ['X-RateLimit-Remaining', '2'],
      ['X-RateLimit-Reset', '3'],
    ]);
  });

  it('a tie on tokens goes to the longest refill; a full tie to the first', () => {
    const limits = [limit('a', 1, 5), limit('b', 1, 6), limit('c', 1, 7)];
    expect(legacyHeaders(limits, [admitted(0, 2000), admitted(0, 4000), admitted(0, 3000)])[0]).toEqual(['X-RateLimit-Limit', '6']);
    expect(legacyHeaders(limits, [admitted(1, 2000), admitted(1, 2000), admitted(1, 2000)])[0]).toEqual(['X-RateLimit-Limit', '5']);
  });
});

describe('retryAfterSeconds (Retry-After)', () => {
  it('the wait of the denying limit, in whole seconds rounded up, at least 1', () => {
    expect(retryAfterSeconds([denied(1000)])).toBe(1);
    expect(retryAfterSeconds([denied(1500)])).toBe(2);
    expect(retryAfterSeconds([denied(1)])).toBe(1);
    expect(retryAfterSeconds([denied(0.001)])).toBe(1);
    expect(retryAfterSeconds([denied(59_000.5)])).toBe(60);
  });

  it('does not add a second for a rounding error', () => {
    expect(retryAfterSeconds([denied(1000.0000000000001)])).toBe(1);
    expect(retryAfterSeconds([denied(2000.0000000000002)])).toBe(2);
  });

  it('the slowest of several denying limits; admitting ones do not count', () => {
    expect(retryAfterSeconds([denied(1500), admitted(0, 90_000), denied(4200)])).toBe(5);
    // Stores answer retryAfterMs 0 when admitting; a non-zero one shows that only denials are read.
    expect(retryAfterSeconds([{ ...admitted(0, 90_000), retryAfterMs: 90_000 }, denied(800)])).toBe(1);
  });

  it('undefined when no wait can help (a cost above the burst), even beside a finite wait', () => {
    expect(retryAfterSeconds([denied(Infinity)])).toBeUndefined();
    expect(retryAfterSeconds([denied(2000), denied(Infinity)])).toBeUndefined();
  });

  it('only meaningful for a denied request: without a denial it is the 1 s floor', () => {
    expect(retryAfterSeconds([admitted(5, 1000)])).toBe(1);
    expect(retryAfterSeconds([])).toBe(1);
  });
});
