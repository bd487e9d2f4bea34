import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { mergeLimits, type DeclaredLimits } from './merge-limits.js';

const limit = (name: string | undefined, rate: number): RateLimitOptions => (name === undefined ? { rate } : { name, rate });

const declared = (parts: Partial<DeclaredLimits>): DeclaredLimits => ({
  moduleLimits: [],
  defaults: undefined,
  classLimits: [],
  methodLimits: [],
  skip: [],
  ...parts,
});

const merge = (parts: Partial<DeclaredLimits>) => mergeLimits(declared(parts), 'OrdersController.search');

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
    const result = merge({ moduleLimits: [limit('global', 100)], classLimits: [limit('class', 10)], methodLimits: [limit('method', 1)] });
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
      expect(merge({ moduleLimits: [limit('burst', 100)], classLimits: [limit('burst', 10)] })).toEqual([{ name: 'burst', rate: 10 }]);
    });

    it('an unnamed limit is the one named "default"', () => {
      expect(merge({ classLimits: [limit(undefined, 10)], methodLimits: [limit('default', 1)] })).toEqual([{ name: 'default', rate: 1 }]);
      expect(merge({ classLimits: [limit('default', 10)], methodLimits: [limit(undefined, 1)] })).toEqual([{ rate: 1 }]);
    });

    it('the replacing limit moves to its own level in the order', () => {
      const result = merge({ moduleLimits: [limit('a', 100), limit('b', 100)], methodLimits: [limit('a', 1)] });
      expect(result).toEqual([
        { name: 'b', rate: 100 },
        { name: 'a', rate: 1 },
      ]);
    });
  });

  describe('defaults', () => {
    const defaults = limit(undefined, 5);

    it('apply to a route without any class or method limit, after the module limits', () => {
      expect(merge({ moduleLimits: [limit('global', 100)], defaults })).toEqual([{ name: 'global', rate: 100 }, { rate: 5 }]);
    });

    it('replace a module limit of their name (unnamed: "default")', () => {
      expect(merge({ moduleLimits: [limit('default', 100)], defaults })).toEqual([{ rate: 5 }]);
    });

    it('do not apply as soon as the class declares a limit, of whatever name', () => {
      expect(merge({ defaults, classLimits: [limit('other', 1)] })).toEqual([{ name: 'other', rate: 1 }]);
    });

    it('do not apply as soon as the method declares a limit, of whatever name', () => {
      expect(merge({ defaults, methodLimits: [limit('other', 1)] })).toEqual([{ name: 'other', rate: 1 }]);
    });

    it('do not fill in names a class or method limit leaves out', () => {
      const result = merge({ moduleLimits: [limit('global', 100)], defaults: limit('per-ip', 5), methodLimits: [limit('other', 1)] });
      expect(result.map((l) => l.name)).toEqual(['global', 'other']);
    });
  });

  describe('skip', () => {
    const everything = {
      moduleLimits: [limit('global', 100)],
      classLimits: [limit('class', 10)],
      methodLimits: [limit('method', 1), limit(undefined, 2)],
    };

    it('true: no limit at all', () => {
      expect(merge({ ...everything, defaults: limit(undefined, 5), skip: true })).toEqual([]);
    });

    it('a list removes those names, whatever level they come from', () => {
      expect(merge({ ...everything, skip: ['global', 'method'] }).map((l) => l.name ?? 'default')).toEqual(['class', 'default']);
    });

    it('"default" removes the unnamed limit', () => {
      expect(merge({ ...everything, skip: ['default'] }).map((l) => l.name)).toEqual(['global', 'class', 'method']);
    });

    it('removes the merged limit, not only the level that named it', () => {
      expect(merge({ moduleLimits: [limit('a', 100)], methodLimits: [limit('a', 1)], skip: ['a'] })).toEqual([]);
    });

    it('an empty list or an unknown name removes nothing', () => {
      expect(merge({ ...everything, skip: [] })).toHaveLength(4);
      expect(merge({ ...everything, skip: ['nope'] })).toHaveLength(4);
    });

    it('a skipped name leaves the defaults out all the same (they depend on declared limits only)', () => {
      expect(merge({ defaults: limit('per-ip', 5), methodLimits: [limit('other', 1)], skip: ['other'] })).toEqual([]);
    });
  });

  describe('duplicate names within one level', () => {
    it.each([
      ['moduleLimits', 'the module limits'],
      ['classLimits', 'the class @RateLimit()'],
      ['methodLimits', 'the method @RateLimit()'],
    ] as const)('%s: a TypeError naming the place, the name and the level', (level, label) => {
      const limits: Partial<DeclaredLimits> = { [level]: [limit('a', 1), limit('b', 2), limit('a', 3)] };
      const merging = () => merge(limits);
      expect(merging).toThrow(TypeError);
      expect(merging).toThrow(`RateLimit: OrdersController.search: duplicate limit name "a" in ${label}; give each limit its own name`);
    });

    it('two unnamed limits are two "default"s', () => {
      expect(() => merge({ methodLimits: [limit(undefined, 1), limit('default', 2)] })).toThrow(/duplicate limit name "default" in the method @RateLimit\(\)/);
    });

    it('are refused even when the name is skipped', () => {
      expect(() => merge({ methodLimits: [limit('a', 1), limit('a', 2)], skip: ['a'] })).toThrow(TypeError);
    });

    it('are not looked at when skip is true (nothing is merged)', () => {
      expect(merge({ methodLimits: [limit('a', 1), limit('a', 2)], skip: true })).toEqual([]);
    });
  });
});
