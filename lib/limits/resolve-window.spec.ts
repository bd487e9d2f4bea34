import { limitContext } from '../../test/utils/limit-context.js';
import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { resolveLimit, type LimitContext } from './resolve-limit.js';

const context: LimitContext = limitContext();
const resolve = (limit: unknown) => () => resolveLimit(limit as RateLimitOptions, context);
const where = 'RateLimit: OrdersController.search, limit';

describe('resolveLimit: window algorithms', () => {
  it("reads 'N/<window>' as N per window, in the bucket the store gets", () => {
    expect(
      resolveLimit({ name: 'daily', rate: '1000/day', algorithm: 'fixed-window' }, context).bucket,
    ).toEqual({
      algorithm: 'fixed-window',
      quota: 1000,
      windowMs: 86_400_000,
    });
    expect(
      resolveLimit({ rate: '100/15min', algorithm: 'sliding-window' }, context).bucket,
    ).toEqual({
      algorithm: 'sliding-window',
      quota: 100,
      windowMs: 900_000,
    });
  });

  it('a number is N per second (a 1 s window)', () => {
    expect(resolveLimit({ rate: 5, algorithm: 'fixed-window' }, context).bucket).toEqual({
      algorithm: 'fixed-window',
      quota: 5,
      windowMs: 1000,
    });
  });

  it('headers read the quota as the burst and the window as burst / rate', () => {
    const limit = resolveLimit({ rate: '5/min', algorithm: 'fixed-window' }, context);
    expect(limit.burst).toBe(5);
    expect((limit.burst * 1000) / limit.rate).toBeCloseTo(60_000, 6);
  });

  it('keeps buckets of each algorithm apart (the key tag)', () => {
    expect(resolveLimit({ rate: 1, algorithm: 'fixed-window' }, context).namespace).toBe(
      'fw|default|r1|',
    );
    expect(resolveLimit({ rate: 1, algorithm: 'sliding-window' }, context).namespace).toBe(
      'sw|default|r1|',
    );
    expect(resolveLimit({ rate: 1 }, context).namespace).toBe('tb|default|r1|');
  });

  it('aligns on calendar days or months in a validated time zone, UTC by default', () => {
    expect(
      resolveLimit({ rate: '1000/day', algorithm: 'fixed-window', calendar: {} }, context).bucket,
    ).toEqual({
      algorithm: 'fixed-window',
      quota: 1000,
      windowMs: 86_400_000,
      calendar: { unit: 'day', timeZone: 'UTC' },
    });
    expect(
      resolveLimit(
        { rate: '50000/month', algorithm: 'fixed-window', calendar: { timeZone: 'Europe/Paris' } },
        context,
      ).bucket,
    ).toMatchObject({
      calendar: { unit: 'month', timeZone: 'Europe/Paris' },
    });
  });

  it.each([
    [
      { rate: '5/min', burst: 5, algorithm: 'fixed-window' },
      `${where} "default": burst has no meaning for a window: the quota is the rate's count ('100/min' admits 100 per minute); remove burst (algorithm 'fixed-window')`,
    ],
    [
      { rate: '5/min', adaptive: { min: 1 }, algorithm: 'sliding-window' },
      `${where} "default": adaptive only works with algorithm 'token-bucket' (it moves a refill rate, which a window does not have) (algorithm 'sliding-window')`,
    ],
    [
      { rate: '5/min', maxDelay: '1s', algorithm: 'fixed-window' },
      `${where} "default": maxDelay only works with algorithm 'token-bucket' (a window has no steady refill to wait for) (algorithm 'fixed-window')`,
    ],
    [
      { rate: '5/min', blockDuration: '1h', algorithm: 'fixed-window' },
      `${where} "default": blockDuration only works with algorithm 'token-bucket' (a window cannot be blocked past its end) (algorithm 'fixed-window')`,
    ],
    [
      { rate: () => 5, algorithm: 'sliding-window' },
      `${where} "default": rate must be a fixed rate with algorithm 'sliding-window', not a function`,
    ],
    [
      { rate: '5/min', algorithm: 'leaky-bucket' },
      `${where} "default": algorithm must be 'token-bucket', 'fixed-window' or 'sliding-window', got "leaky-bucket"`,
    ],
    [
      { rate: '5/day', calendar: {} },
      `${where} "default": calendar only applies to algorithm 'fixed-window' (windows aligned on calendar days or months), got algorithm 'token-bucket'`,
    ],
    [
      { rate: '5/day', algorithm: 'sliding-window', calendar: {} },
      `${where} "default": calendar only applies to algorithm 'fixed-window' (windows aligned on calendar days or months), got algorithm 'sliding-window'`,
    ],
    [
      { rate: '5/2day', algorithm: 'fixed-window', calendar: {} },
      `${where} "default": rate must count per 'day' or per 'month' (no multiplier) with calendar: windows are calendar days or months`,
    ],
    [
      { rate: '5/h', algorithm: 'fixed-window', calendar: {} },
      `${where} "default": rate must count per 'day' or per 'month' (no multiplier) with calendar: windows are calendar days or months`,
    ],
    [
      { rate: '5/month', algorithm: 'fixed-window' },
      `${where} "default": rate can only count per month with calendar: {} (windows on calendar months); or write '/30d'`,
    ],
    [
      { rate: '5/month', algorithm: 'sliding-window' },
      `${where} "default": rate can only count per month with algorithm 'fixed-window' and calendar: {} (a month has no fixed length)`,
    ],
    [
      { rate: '5/month' },
      `${where} "default": rate must be a positive number of tokens per second or a string like '10/s' or '100/15min', got "5/month"`,
    ],
    [
      { rate: 0.5, algorithm: 'fixed-window' },
      `${where} "default": rate must allow at least 1 per window with algorithm 'fixed-window', got 0.5; use a longer window ('1/2s')`,
    ],
    [
      { rate: '1/0.5ms', algorithm: 'fixed-window' },
      `${where} "default": rate must have a window of whole milliseconds, from 1 ms to 50000000000000 ms, got "1/0.5ms"`,
    ],
    [
      { rate: '5/day', algorithm: 'fixed-window', calendar: { timeZone: 'Mars/Olympus' } },
      `${where} "default": calendar.timeZone is not a time zone this runtime knows (Intl.DateTimeFormat refused it), got "Mars/Olympus"`,
    ],
    [
      { rate: '5/day', algorithm: 'fixed-window', calendar: { timezone: 'UTC' } },
      `${where} "default": calendar.timezone is not an option (did you mean timeZone?)`,
    ],
    [
      { rate: '5/min', cost: 6, algorithm: 'fixed-window' },
      `${where} "default": cost (6) is larger than the quota (5): every request would be denied`,
    ],
  ])('%j is refused at start-up', (limit, message) => {
    expect(resolve(limit)).toThrow(new TypeError(message));
  });
});
