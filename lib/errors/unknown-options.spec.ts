import { closestName, editDistance, optionNames, rejectUnknownOptions } from './unknown-options.js';

const LIMIT = ['name', 'rate', 'burst', 'cost', 'key', 'scope', 'failMode', 'adaptive'];
const MODULE = [
  'store',
  'defaults',
  'limits',
  'headers',
  'failMode',
  'trustProxy',
  'clock',
  'ipv6Subnet',
];

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['rate', 'rate', 0],
    ['', 'abc', 3],
    ['abc', '', 3],
    ['brust', 'burst', 1], // a swap of two adjacent characters is one edit
    ['usefactroy', 'usefactory', 1],
    ['default', 'defaults', 1],
    ['rat', 'rate', 1],
    ['rote', 'rate', 1],
    ['kitten', 'sitting', 3],
    ['ca', 'abc', 3], // optimal string alignment: no edit of a swapped pair
  ])('%p → %p: %p', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('closestName', () => {
  it.each([
    ['brust', LIMIT, 'burst'],
    ['rat', LIMIT, 'rate'],
    ['Rate', LIMIT, 'rate'],
    ['failmode', LIMIT, 'failMode'],
    ['adaptve', LIMIT, 'adaptive'],
    ['trustproxy', MODULE, 'trustProxy'],
    ['TRUSTPROXY', MODULE, 'trustProxy'],
    ['default', MODULE, 'defaults'],
    ['limit', MODULE, 'limits'],
    ['header', MODULE, 'headers'],
    ['ipv6subnet', MODULE, 'ipv6Subnet'],
  ])('%p among %j: %p', (name, known, expected) => {
    expect(closestName(name, known)).toBe(expected);
  });

  it.each([
    ['blockDuration', LIMIT],
    ['blockDuration', MODULE],
    ['ttl', LIMIT],
    ['x', LIMIT],
    ['', LIMIT],
    ['windowMs', LIMIT],
  ])('%p among %j: nothing plausible', (name, known) => {
    expect(closestName(name, known)).toBeUndefined();
  });

  it('prefers the nearer name, and the first one on a tie', () => {
    expect(closestName('bursts', ['burst', 'bursty'])).toBe('burst');
    expect(closestName('ab', ['ax', 'ay'])).toBe('ax');
    expect(closestName('burst', [])).toBeUndefined();
  });
});

describe('rejectUnknownOptions', () => {
  const where = 'RateLimit: OrdersController.search, limit "default"';

  it('accepts known names, an empty object, and leaves non-objects to the caller', () => {
    expect(() =>
      rejectUnknownOptions(
        where,
        {
          rate: '2/min',
          burst: 20,
          name: 'x',
          cost: 1,
          key: 'ip',
          scope: 'route',
          failMode: 'open',
          adaptive: {},
        },
        LIMIT,
      ),
    ).not.toThrow();
    expect(() => rejectUnknownOptions(where, {}, LIMIT)).not.toThrow();
    for (const value of [undefined, null, 5, 'rate', true])
      expect(() => rejectUnknownOptions(where, value, LIMIT)).not.toThrow();
  });

  it('refuses a misspelling, naming where, the name and the closest known name', () => {
    expect(() => rejectUnknownOptions(where, { rate: '2/min', brust: 20 }, LIMIT)).toThrow(
      new TypeError(
        'RateLimit: OrdersController.search, limit "default": brust is not an option (did you mean burst?)',
      ),
    );
    expect(() => rejectUnknownOptions('RateLimitModule', { trustproxy: true }, MODULE)).toThrow(
      new TypeError('RateLimitModule: trustproxy is not an option (did you mean trustProxy?)'),
    );
  });

  it('lists the known names when none is close', () => {
    expect(() => rejectUnknownOptions(where, { rate: 1, blockDuration: 60 }, LIMIT)).toThrow(
      new TypeError(
        `${where}: blockDuration is not an option (known options: name, rate, burst, cost, key, scope, failMode, adaptive)`,
      ),
    );
  });

  it('refuses a name even when its value is undefined (it is still a misspelling)', () => {
    expect(() => rejectUnknownOptions(where, { rate: 1, brust: undefined }, LIMIT)).toThrow(
      /brust is not an option/,
    );
  });

  it('names a nested object with the prefix', () => {
    expect(() => rejectUnknownOptions(where, { mni: 1 }, ['min', 'max'], 'adaptive.')).toThrow(
      new TypeError(`${where}: adaptive.mni is not an option (did you mean min?)`),
    );
  });

  it('reports the first unknown name, in the order they were written', () => {
    expect(() => rejectUnknownOptions(where, { rate: 1, brust: 2, cots: 3 }, LIMIT)).toThrow(
      /: brust is not/,
    );
  });

  it('does not look at inherited or symbol keys', () => {
    const options = Object.assign(Object.create({ inherited: true }) as object, {
      rate: 1,
      [Symbol('meta')]: 1,
    });
    expect(() => rejectUnknownOptions(where, options, LIMIT)).not.toThrow();
  });
});

describe('optionNames', () => {
  it("lists the record's names, frozen", () => {
    const names = optionNames<{ a?: number; b: string }>({ a: true, b: true });
    expect(names).toEqual(['a', 'b']);
    expect(Object.isFrozen(names)).toBe(true);
  });
});
