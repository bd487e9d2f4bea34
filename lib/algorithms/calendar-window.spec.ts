import { calendarBoundaries, calendarWindow, timeZoneProblem } from './calendar-window.js';

const utc = (iso: string): number => Date.parse(iso);
const HOUR = 3_600_000;

describe('calendar windows', () => {
  it('a UTC day is [midnight, next midnight)', () => {
    expect(
      calendarWindow(utc('2026-05-05T13:14:15.500Z'), { unit: 'day', timeZone: 'UTC' }),
    ).toEqual({
      start: utc('2026-05-05T00:00:00Z'),
      end: utc('2026-05-06T00:00:00Z'),
    });
  });

  it.each([
    [
      'America/New_York: the 23-hour day of 2026-03-08',
      'America/New_York',
      '2026-03-08T12:00:00Z',
      '2026-03-08T05:00:00Z',
      '2026-03-09T04:00:00Z',
      23,
    ],
    [
      'America/New_York: the 25-hour day of 2026-11-01',
      'America/New_York',
      '2026-11-01T12:00:00Z',
      '2026-11-01T04:00:00Z',
      '2026-11-02T05:00:00Z',
      25,
    ],
    [
      'Australia/Lord_Howe: a half-hour shift (2026-04-05)',
      'Australia/Lord_Howe',
      '2026-04-05T06:00:00Z',
      '2026-04-04T13:00:00Z',
      '2026-04-05T13:30:00Z',
      24.5,
    ],
    [
      'Asia/Kathmandu: UTC+5:45',
      'Asia/Kathmandu',
      '2026-01-01T00:00:00Z',
      '2025-12-31T18:15:00Z',
      '2026-01-01T18:15:00Z',
      24,
    ],
  ])('%s', (_name, timeZone, at, start, end, hours) => {
    const window = calendarWindow(utc(at), { unit: 'day', timeZone });
    expect(window).toEqual({ start: utc(start), end: utc(end) });
    expect((window.end - window.start) / HOUR).toBe(hours);
  });

  it('a day whose midnight does not exist starts when the clocks jump (America/Santiago, 2026-09-06)', () => {
    // Chile moves from UTC-4 to UTC-3 at local midnight: 00:00 becomes 01:00, at 04:00Z.
    const window = calendarWindow(utc('2026-09-06T12:00:00Z'), {
      unit: 'day',
      timeZone: 'America/Santiago',
    });
    expect(window.start).toBe(utc('2026-09-06T04:00:00Z'));
    expect(window.end).toBe(utc('2026-09-07T03:00:00Z'));
  });

  it('months start on the 1st at midnight in the zone', () => {
    expect(
      calendarWindow(utc('2026-12-31T23:30:00Z'), { unit: 'month', timeZone: 'Europe/Paris' }),
    ).toEqual({
      start: utc('2026-12-31T23:00:00Z'), // January 1st, 00:00 in Paris
      end: utc('2027-01-31T23:00:00Z'),
    });
  });

  it('boundaries for the Redis scripts: the window before, the current one, the next', () => {
    expect(
      calendarBoundaries(utc('2026-03-10T12:00:00Z'), { unit: 'day', timeZone: 'UTC' }),
    ).toEqual([
      utc('2026-03-09T00:00:00Z'),
      utc('2026-03-10T00:00:00Z'),
      utc('2026-03-11T00:00:00Z'),
      utc('2026-03-12T00:00:00Z'),
    ]);
  });

  it('every instant of a year falls in the window it computes (hourly, three zones)', () => {
    for (const timeZone of ['Europe/Paris', 'America/Santiago', 'Australia/Lord_Howe']) {
      const calendar = { unit: 'day' as const, timeZone };
      for (let t = utc('2026-01-01T00:00:00Z'); t < utc('2027-01-01T00:00:00Z'); t += HOUR) {
        const { start, end } = calendarWindow(t, calendar);
        if (!(start <= t && t < end && end - start >= 22 * HOUR && end - start <= 26 * HOUR))
          throw new Error(`${timeZone} at ${new Date(t).toISOString()}: [${start}, ${end})`);
      }
    }
  });

  it('validates time zone names', () => {
    expect(timeZoneProblem('Europe/Paris')).toBeUndefined();
    expect(timeZoneProblem('Europe/Pariss')).toMatch(/not a time zone/);
    expect(timeZoneProblem(42)).toMatch(/IANA time zone name/);
  });
});
