import { gcraConsume, type BucketLimit } from '../algorithms/gcra.js';
import { admitted, denied, limit } from '../../test/utils/header-fixtures.js';
import {
  effectiveWindowSeconds,
  policyHeader,
  rateLimitHeader,
  retryAfterSeconds,
} from './rate-limit-headers.js';
import {
  draft6Headers,
  draft7Headers,
  legacyHeaders,
  numericPolicyHeader,
} from './single-limit-headers.js';

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
    expect(policyHeader([limit('burst', 10, 20), limit('daily', 1000 / 86_400, 1000)])).toBe(
      '"burst";q=20;w=2, "daily";q=1000;w=86400',
    );
  });
});

describe('rateLimitHeader (RateLimit, draft -11)', () => {
  const perSecond = limit('default', 1, 10); // one token per 1000 ms

  it('r is the whole tokens remaining; t the seconds until one more whole token, even while some are left', () => {
    expect(rateLimitHeader([perSecond], [admitted(9, 1000)])).toBe('"default";r=9;t=1');
    expect(rateLimitHeader([perSecond], [admitted(1, 9000)])).toBe('"default";r=1;t=1');
    expect(rateLimitHeader([limit('slow', 0.1, 5)], [admitted(3, 15_000)])).toBe('"slow";r=3;t=5'); // 3.5 tokens: the 4th in 5 s
  });

  it('a full bucket: t is one emission interval (a token spent now is back that long after)', () => {
    expect(rateLimitHeader([perSecond], [admitted(10, 0)])).toBe('"default";r=10;t=1');
    expect(rateLimitHeader([limit('slow', 0.1, 5)], [admitted(5, 0)])).toBe('"slow";r=5;t=10');
  });

  it('empty: t is the seconds until the next token, rounded up', () => {
    // Full again in resetMs; the first token is back (burst - 1) tokens before that.
    expect(rateLimitHeader([perSecond], [admitted(0, 10_000)])).toBe('"default";r=0;t=1');
    expect(rateLimitHeader([perSecond], [denied(500, 9500)])).toBe('"default";r=0;t=1');
    expect(rateLimitHeader([perSecond], [denied(1001, 10_001)])).toBe('"default";r=0;t=2');
    expect(rateLimitHeader([limit('slow', 0.1, 1)], [denied(10_000, 10_000)])).toBe(
      '"slow";r=0;t=10',
    );
  });

  it('t is at least 1: a window of 0 seconds tells a client nothing, and a token due "now" may be a few microseconds away', () => {
    expect(rateLimitHeader([perSecond], [denied(1, 9000)])).toBe('"default";r=0;t=1');
    expect(rateLimitHeader([limit('fast', 100, 10)], [admitted(9, 10)])).toBe('"fast";r=9;t=1');
  });

  it('t is about the next token, not the retry of a larger cost', () => {
    // A cost-5 request waits 4 s more, yet a token is back in 1 s.
    expect(rateLimitHeader([perSecond], [denied(4000, 10_000)])).toBe('"default";r=0;t=1');
    expect(rateLimitHeader([perSecond], [denied(Infinity, 10_000)])).toBe('"default";r=0;t=1');
  });

  it('t does not round a rounding error up to one more second', () => {
    // 0.3 tokens per second, burst 2: the next token 1000.0000000000005 ms away.
    expect(rateLimitHeader([limit('a', 0.3, 2)], [denied(1000, 1000 + 1000 / 0.3)])).toBe(
      '"a";r=0;t=1',
    );
  });

  it('one member per limit, in order', () => {
    expect(
      rateLimitHeader(
        [perSecond, limit('hourly', 1 / 3600, 100)],
        [admitted(3, 7000), denied(3_600_000, 360_000_000)],
      ),
    ).toBe('"default";r=3;t=1, "hourly";r=0;t=3600');
  });
});

describe('effectiveWindowSeconds: a client that follows r and t is never denied', () => {
  const limits: readonly BucketLimit[] = [
    { rate: 1, burst: 1 },
    { rate: 1, burst: 10 },
    { rate: 3, burst: 3 },
    { rate: 0.3, burst: 2 },
    { rate: 7, burst: 10 },
    { rate: 250, burst: 40 },
    { rate: 1 / 60, burst: 5 },
  ];

  it.each(limits.map((l) => [`${l.rate}/s burst ${l.burst}`, l] as const))(
    '%s',
    (_label, bucket) => {
      // A greedy client: it spends whatever r says, and when r is 0 it waits t
      // seconds (plus a jitter that never makes it earlier) before asking again.
      let random = 7;
      const jitterMs = (): number => ((random = (random * 48_271) % 2_147_483_647) % 997) / 3;
      let tat: number | undefined;
      let now = 1_700_000_000_000;
      let checked = 0;
      for (let request = 0; request < 400; request++) {
        const { tat: next, decision } = gcraConsume(tat, now, bucket, 1);
        expect(decision.allowed).toBe(true);
        tat = next;
        const t = effectiveWindowSeconds(decision, bucket);
        expect(t).toBeGreaterThanOrEqual(1);
        if (decision.remaining === 0) {
          now += t * 1000 + jitterMs();
          checked++;
        } else if (request % 50 === 0) {
          now += jitterMs(); // sometimes it pauses while it still has tokens
        }
      }
      expect(checked).toBeGreaterThan(0);
    },
  );

  it("Retry-After is never earlier than the end of the denying limit's effective window (draft -11, section 6)", () => {
    for (const bucket of limits) {
      let tat: number | undefined;
      const now = 1_000_000;
      for (let i = 0; i < Math.ceil(bucket.burst) + 2; i++) {
        const { tat: next, decision } = gcraConsume(tat, now, bucket, 1);
        tat = next;
        if (!decision.allowed)
          expect(retryAfterSeconds([decision])).toBeGreaterThanOrEqual(
            effectiveWindowSeconds(decision, bucket),
          );
      }
    }
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
    expect(retryAfterSeconds([{ ...admitted(0, 90_000), retryAfterMs: 90_000 }, denied(800)])).toBe(
      1,
    );
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

describe('concurrency limits in the headers', () => {
  const slots = { name: 'generations', rate: 4, burst: 4, unit: 'concurrent-requests' as const };
  const rate = { name: 'minute', rate: 10 / 60, burst: 5 };
  const admitted = { allowed: true, remaining: 3, retryAfterMs: 0, resetMs: 0 };

  it('policy: q = the slots, qu="concurrent-requests", no w; RateLimit: r = free slots, no t', () => {
    expect(policyHeader([rate, slots])).toBe(
      '"minute";q=5;w=30, "generations";q=4;qu="concurrent-requests"',
    );
    expect(rateLimitHeader([slots], [admitted])).toBe('"generations";r=3');
  });

  it('the single-limit formats leave them out (they speak of windows); none left: nothing', () => {
    const rateDecision = { allowed: true, remaining: 4, retryAfterMs: 0, resetMs: 6_000 };
    const denied = {
      allowed: false,
      remaining: 0,
      retryAfterMs: 1_000,
      resetMs: 0,
      reason: 'limit' as const,
    };
    expect(legacyHeaders([rate, slots], [rateDecision, denied])).toEqual([
      ['x-ratelimit-limit', '5'],
      ['x-ratelimit-remaining', '4'],
      ['x-ratelimit-reset', '6'],
    ]);
    expect(numericPolicyHeader([rate, slots])).toBe('5;w=30');
    expect(legacyHeaders([slots], [denied])).toEqual([]);
    expect(draft6Headers([slots], [denied])).toEqual([]);
    expect(draft7Headers([slots], [denied])).toEqual([]);
    expect(retryAfterSeconds([rateDecision, denied])).toBe(1);
  });
});
