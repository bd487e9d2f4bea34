import { HotKeys } from './hot-keys.js';
import { resolveHotKeysOptions } from './hot-keys-options.js';

const T0 = 1_700_000_000_000;
const WINDOW = 60_000;

function tracker(size = 3, logTop = 0) {
  const said: string[] = [];
  const hot = new HotKeys({ size, windowMs: WINDOW, logTop }, T0, (message) => said.push(message));
  return { hot, said };
}

function deny(hot: HotKeys, limit: string, key: string, times: number, now: number) {
  for (let i = 0; i < times; i++) hot.denied(limit, key, now);
}

describe('HotKeys', () => {
  it("reports each limit's most denied callers, most denied first", () => {
    const { hot } = tracker();
    deny(hot, 'search', '203.0.113.7', 5, T0);
    deny(hot, 'search', '203.0.113.8', 2, T0);
    deny(hot, 'login', 'alice@example.com', 3, T0);
    expect(hot.hottest({}, T0)).toEqual([
      { limit: 'search', key: '203.0.113.7', denied: 5, overcount: 0 },
      { limit: 'search', key: '203.0.113.8', denied: 2, overcount: 0 },
      { limit: 'login', key: 'alice@example.com', denied: 3, overcount: 0 },
    ]);
    expect(hot.hottest({ limit: 'login', top: 1 }, T0)).toEqual([
      { limit: 'login', key: 'alice@example.com', denied: 3, overcount: 0 },
    ]);
    expect(hot.hottest({ limit: 'nobody' }, T0)).toEqual([]);
  });

  it('covers the current and the previous window; older denials are forgotten', () => {
    const { hot } = tracker();
    deny(hot, 'search', 'a', 4, T0);
    deny(hot, 'search', 'a', 1, T0 + WINDOW + 1); // next window: both count
    expect(hot.hottest({}, T0 + WINDOW + 1)).toEqual([
      { limit: 'search', key: 'a', denied: 5, overcount: 0 },
    ]);
    deny(hot, 'search', 'b', 1, T0 + 2 * WINDOW + 1); // the first window is gone
    expect(hot.hottest({}, T0 + 2 * WINDOW + 1)).toEqual([
      { limit: 'search', key: 'a', denied: 1, overcount: 0 },
      { limit: 'search', key: 'b', denied: 1, overcount: 0 },
    ]);
    expect(hot.hottest({}, T0 + 10 * WINDOW)).toEqual([]); // a long quiet: nothing recent
  });

  it("a caller missing from a full window's summary is bounded by that window's least count, not assumed absent", () => {
    const { hot } = tracker(2);
    deny(hot, 'search', 'a', 3, T0);
    deny(hot, 'search', 'b', 2, T0);
    deny(hot, 'search', 'c', 1, T0 + WINDOW); // next window, not full: no bound from it
    // 'c' is missing from the first window, full with least count 2: between 1 and 3.
    expect(hot.hottest({}, T0 + WINDOW)).toEqual([
      { limit: 'search', key: 'a', denied: 3, overcount: 0 },
      { limit: 'search', key: 'c', denied: 3, overcount: 2 },
      { limit: 'search', key: 'b', denied: 2, overcount: 0 },
    ]);
  });

  it("with log, says each finished window's top callers once, when the next denial comes, and the current one at flush", () => {
    const { hot, said } = tracker(5, 2);
    deny(hot, 'search', 'a', 3, T0);
    deny(hot, 'search', 'b', 2, T0);
    deny(hot, 'search', 'c', 1, T0);
    expect(said).toEqual([]);
    hot.denied('search', 'a', T0 + WINDOW + 5);
    expect(said).toEqual([
      `RateLimit: limit "search": most denied callers in the 60 s window from ${new Date(T0).toISOString()}: a (3), b (2)`,
    ]);
    hot.flush();
    expect(said).toHaveLength(2);
    expect(said[1]).toBe(
      `RateLimit: limit "search": most denied callers in the 60 s window from ${new Date(T0 + WINDOW).toISOString()}: a (1)`,
    );
    hot.flush();
    expect(said).toHaveLength(2);
  });

  it('without log, says nothing', () => {
    const { hot, said } = tracker(5, 0);
    deny(hot, 'search', 'a', 3, T0);
    hot.denied('search', 'a', T0 + 5 * WINDOW);
    hot.flush();
    expect(said).toEqual([]);
  });
});

describe('resolveHotKeysOptions', () => {
  it('is off unless enabled; true takes the defaults', () => {
    expect(resolveHotKeysOptions(undefined)).toBeUndefined();
    expect(resolveHotKeysOptions(false)).toBeUndefined();
    expect(resolveHotKeysOptions(true)).toEqual({ size: 100, windowMs: 60_000, logTop: 0 });
    expect(resolveHotKeysOptions({ size: 20, window: '5min', log: { top: 3 } })).toEqual({
      size: 20,
      windowMs: 300_000,
      logTop: 3,
    });
    expect(resolveHotKeysOptions({ log: true })).toEqual({
      size: 100,
      windowMs: 60_000,
      logTop: 10,
    });
  });

  it('takes the deprecated windowMs as window (a duration too), and says so', () => {
    const told: string[][] = [];
    const deprecated = (option: string, replacement: string) => told.push([option, replacement]);
    expect(resolveHotKeysOptions({ window: 90_000 }, deprecated)).toMatchObject({
      windowMs: 90_000,
    });
    expect(told).toEqual([]);
    expect(resolveHotKeysOptions({ windowMs: '5min' }, deprecated)).toMatchObject({
      windowMs: 300_000,
    });
    expect(resolveHotKeysOptions({ windowMs: 120_000 }, deprecated)).toMatchObject({
      windowMs: 120_000,
    });
    expect(told).toEqual([
      ['hotKeys.windowMs', 'hotKeys.window'],
      ['hotKeys.windowMs', 'hotKeys.window'],
    ]);
  });

  it.each([
    [{ size: 0 }, 'RateLimitModule: hotKeys.size must be an integer from 1 to 10000, got 0'],
    [
      { window: '10ms' },
      'hotKeys.window must be a duration from 1s to 1d (milliseconds or a string such as \'5min\'), got "10ms"',
    ],
    [
      { window: '1min', windowMs: '1min' },
      'hotKeys.windowMs is the deprecated name of hotKeys.window: give only window',
    ],
    [
      { windowMs: '10ms' },
      'hotKeys.windowMs must be a duration from 1s to 1d (milliseconds or a string such as \'5min\'), got "10ms"',
    ],
    [{ log: 'yes' }, 'hotKeys.log must be a boolean or { top }, got "yes"'],
    [
      { size: 5, log: { top: 6 } },
      'hotKeys.log.top must be an integer from 1 to hotKeys.size (5), got 6',
    ],
    [{ sise: 5 }, 'did you mean size?'],
    ['on', 'hotKeys must be true or { size?, window?, log? }, got "on"'],
  ])('%j is refused', (given, message) => {
    expect(() => resolveHotKeysOptions(given as never)).toThrow(message);
  });
});
