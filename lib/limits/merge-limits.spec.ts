import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { mergeLimits, type DeclaredLimits } from './merge-limits.js';

const limit = (name: string | undefined, rate: number): RateLimitOptions =>
  name === undefined ? { rate } : { name, rate };

const declared = (parts: Partial<DeclaredLimits>): DeclaredLimits => ({
  moduleLimits: [],
  defaults: undefined,
  classLimits: [],
  methodLimits: [],
  classSkip: undefined,
  methodSkip: undefined,
  ...parts,
});

const merge = (parts: Partial<DeclaredLimits>) =>
  mergeLimits(declared(parts), 'OrdersController.search');

describe('mergeLimits', () => {
  it('no limits anywhere: none', () => {
    expect(merge({})).toEqual([]);
  });

  it('keeps the declared objects themselves, in order', () => {
    const a = limit('a', 1);
    const b = limit('b', 2);
    const result = merge({ methodLimits: [a, b] });
    expect(result).toHaveLength(2);
    expect(result[0]).toBe(a);
    expect(result[1]).toBe(b);
  });

  it('adds up limits of different names from every level: module, then class, then method', () => {
    const result = merge({
      moduleLimits: [limit('global', 100)],
      classLimits: [limit('class', 10)],
      methodLimits: [limit('method', 1)],
    });
    expect(result.map((l) => l.name)).toEqual(['global', 'class', 'method']);
  });

  describe('a more specific limit replaces a less specific one of the same name', () => {
    it('method over class over module', () => {
      const result = merge({
        moduleLimits: [limit('burst', 100)],
        classLimits: [limit('burst', 10)],
        methodLimits: [limit('burst', 1)],
      });
      expect(result).toEqual([{ name: 'burst', rate: 1 }]);
    });

    it('class over module, when the method says nothing of that name', () => {
      expect(
        merge({ moduleLimits: [limit('burst', 100)], classLimits: [limit('burst', 10)] }),
      ).toEqual([{ name: 'burst', rate: 10 }]);
    });

    it('an unnamed limit is the one named "default"', () => {
      expect(
        merge({ classLimits: [limit(undefined, 10)], methodLimits: [limit('default', 1)] }),
      ).toEqual([{ name: 'default', rate: 1 }]);
      expect(
        merge({ classLimits: [limit('default', 10)], methodLimits: [limit(undefined, 1)] }),
      ).toEqual([{ rate: 1 }]);
    });

    it('the replacing limit moves to its own level in the order', () => {
      const result = merge({
        moduleLimits: [limit('a', 100), limit('b', 100)],
        methodLimits: [limit('a', 1)],
      });
      expect(result).toEqual([
        { name: 'b', rate: 100 },
        { name: 'a', rate: 1 },
      ]);
    });
  });

  describe('defaults', () => {
    const defaults = limit(undefined, 5);

    it('apply to a route without any class or method limit, after the module limits', () => {
      expect(merge({ moduleLimits: [limit('global', 100)], defaults })).toEqual([
        { name: 'global', rate: 100 },
        { rate: 5 },
      ]);
    });

    it('replace a module limit of their name (unnamed: "default")', () => {
      expect(merge({ moduleLimits: [limit('default', 100)], defaults })).toEqual([{ rate: 5 }]);
    });

    it('do not apply as soon as the class declares a limit, of whatever name', () => {
      expect(merge({ defaults, classLimits: [limit('other', 1)] })).toEqual([
        { name: 'other', rate: 1 },
      ]);
    });

    it('do not apply as soon as the method declares a limit, of whatever name', () => {
      expect(merge({ defaults, methodLimits: [limit('other', 1)] })).toEqual([
        { name: 'other', rate: 1 },
      ]);
    });

    it('do not fill in names a class or method limit leaves out', () => {
      const result = merge({
        moduleLimits: [limit('global', 100)],
        defaults: limit('per-ip', 5),
        methodLimits: [limit('other', 1)],
      });
      expect(result.map((l) => l.name)).toEqual(['global', 'other']);
    });
  });

  describe('skip: the nearest declaration wins', () => {
    const everything = {
      moduleLimits: [limit('global', 100)],
      classLimits: [limit('class', 10)],
      methodLimits: [limit('method', 1), limit(undefined, 2)],
    };
    const names = (parts: Partial<DeclaredLimits>) => merge(parts).map((l) => l.name ?? 'default');

    it('a method skipping everything: nothing from the module or the class', () => {
      expect(
        names({ ...everything, methodLimits: [], defaults: limit(undefined, 5), methodSkip: true }),
      ).toEqual([]);
    });

    it("a method's own @RateLimit() applies under its own @SkipRateLimit() (skip everything inherited, keep mine)", () => {
      expect(names({ ...everything, methodSkip: true })).toEqual(['method', 'default']);
    });

    it("a method's explicit @RateLimit() applies under a class @SkipRateLimit()", () => {
      expect(names({ ...everything, classSkip: true })).toEqual(['class', 'method', 'default']);
      expect(
        names({
          moduleLimits: [limit('global', 100)],
          methodLimits: [limit('login', 1)],
          classSkip: true,
        }),
      ).toEqual(['login']);
      expect(
        names({ moduleLimits: [limit('a', 100)], methodLimits: [limit('a', 1)], classSkip: ['a'] }),
      ).toEqual(['a']);
      expect(
        merge({ moduleLimits: [limit('a', 100)], methodLimits: [limit('a', 1)], classSkip: ['a'] }),
      ).toEqual([{ name: 'a', rate: 1 }]);
    });

    it('a class skip removes module limits and defaults, not what the class or the method declares', () => {
      expect(
        names({
          moduleLimits: [limit('global', 100)],
          defaults: limit(undefined, 5),
          classSkip: true,
        }),
      ).toEqual([]);
      expect(
        names({
          moduleLimits: [limit('global', 100)],
          defaults: limit(undefined, 5),
          classSkip: ['default'],
        }),
      ).toEqual(['global']);
    });

    it('a method skip removes class and module limits by name', () => {
      expect(names({ ...everything, methodSkip: ['global', 'class'] })).toEqual([
        'method',
        'default',
      ]);
    });

    it('a skipped name leaves the defaults out all the same (they depend on declared limits only)', () => {
      expect(
        merge({
          defaults: limit('per-ip', 5),
          classLimits: [limit('other', 1)],
          methodSkip: ['other'],
        }),
      ).toEqual([]);
    });

    it('an empty list removes nothing', () => {
      expect(merge({ ...everything, methodSkip: [] })).toHaveLength(4);
    });

    it('a name declared nowhere for the route is refused (a typo would skip nothing), listing the names there are', () => {
      expect(() => merge({ ...everything, methodSkip: ['metod'] })).toThrow(
        "RateLimit: OrdersController.search: @SkipRateLimit('metod') on the method names no limit declared for this route (declared: global, class, method, default)",
      );
      expect(() => merge({ classSkip: ['x'] })).toThrow(
        /@SkipRateLimit\('x'\) on the class names no limit declared for this route \(declared: none\)/,
      );
    });

    it('a name both skipped and declared at the same level is refused', () => {
      expect(() =>
        merge({
          moduleLimits: [limit('a', 100)],
          methodLimits: [limit('a', 1)],
          methodSkip: ['a'],
        }),
      ).toThrow(
        'RateLimit: OrdersController.search: limit "a" is both declared by the method @RateLimit() and skipped by @SkipRateLimit() at the same level; keep one of the two',
      );
      expect(() => merge({ classLimits: [limit('a', 1)], classSkip: ['a'] })).toThrow(
        /declared by the class @RateLimit\(\) and skipped/,
      );
    });
  });

  describe('duplicate names within one level', () => {
    it.each([
      ['moduleLimits', 'the module limits'],
      ['classLimits', 'the class @RateLimit()'],
      ['methodLimits', 'the method @RateLimit()'],
    ] as const)('%s: a TypeError naming the place, the name and the level', (level, label) => {
      const limits: Partial<DeclaredLimits> = {
        [level]: [limit('a', 1), limit('b', 2), limit('a', 3)],
      };
      const merging = () => merge(limits);
      expect(merging).toThrow(TypeError);
      expect(merging).toThrow(
        `RateLimit: OrdersController.search: duplicate limit name "a" in ${label}; give each limit its own name`,
      );
    });

    it('two unnamed limits are two "default"s', () => {
      expect(() => merge({ methodLimits: [limit(undefined, 1), limit('default', 2)] })).toThrow(
        /duplicate limit name "default" in the method @RateLimit\(\)/,
      );
    });

    it('are refused even when the name is skipped elsewhere', () => {
      expect(() =>
        merge({ methodLimits: [limit('a', 1), limit('a', 2)], classSkip: ['a'] }),
      ).toThrow(/duplicate limit name "a"/);
      expect(() =>
        merge({ methodLimits: [limit('a', 1), limit('a', 2)], classSkip: true }),
      ).toThrow(/duplicate limit name "a"/);
    });
  });
});
