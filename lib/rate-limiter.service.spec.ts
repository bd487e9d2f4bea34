import 'reflect-metadata';
import { MemoryStore } from '../adapters/memory/memory.store.js';
import { ManualClock } from './clock.js';
import { RateLimiter, type ProgrammaticLimit } from './rate-limiter.service.js';

describe('RateLimiter: the limits it takes', () => {
  const limiter = new RateLimiter(new MemoryStore(), new ManualClock(1_000_000), {
    failMode: 'open',
    ipv6Subnet: 64,
    errorFormat: 'nest',
  });

  it('accepts { name, rate, burst }, and validates each limit object once', async () => {
    const limit: ProgrammaticLimit = { name: 'jobs', rate: '2/min', burst: 3 };
    expect((await limiter.consume('a', limit)).remaining).toBe(2);
    expect((await limiter.peek('a', limit)).remaining).toBe(2);
    await limiter.reset('a', limit);
    expect((await limiter.peek('a', limit)).remaining).toBe(3);
  });

  it("with no burst, a string rate's bucket holds its count, a number's one second of it", async () => {
    const perMinute: ProgrammaticLimit = { name: 'per-minute', rate: '10/min' };
    for (let i = 9; i >= 0; i--)
      expect(await limiter.consume('b', perMinute)).toMatchObject({ allowed: true, remaining: i });
    expect((await limiter.consume('b', perMinute)).allowed).toBe(false);
    const perSecond: ProgrammaticLimit = { name: 'per-second', rate: 2.5 };
    expect((await limiter.peek('b', perSecond)).remaining).toBe(3);
  });

  it.each([
    [
      { name: 'jobs', rate: '2/min', brust: 20 },
      'RateLimiter: limit "jobs": brust is not an option (did you mean burst?)',
    ],
    [
      { rate: 1, nmae: 'jobs' },
      'RateLimiter: limit "default": nmae is not an option (did you mean name?)',
    ],
    // A route limit's other options mean nothing here, so they are refused rather than ignored.
    [
      { rate: 1, cost: 5 },
      'RateLimiter: limit "default": cost is not an option (known options: name, rate, burst)',
    ],
    [
      { rate: 1, scope: 'route' },
      'RateLimiter: limit "default": scope is not an option (known options: name, rate, burst)',
    ],
  ])('%j is refused by consume, peek and reset', async (limit, message) => {
    const error = new TypeError(message);
    await expect(limiter.consume('a', limit as ProgrammaticLimit)).rejects.toThrow(error);
    await expect(limiter.peek('a', limit as ProgrammaticLimit)).rejects.toThrow(error);
    await expect(limiter.reset('a', limit as ProgrammaticLimit)).rejects.toThrow(error);
  });

  it('shows values by type', async () => {
    await expect(limiter.consume('a', { rate: '1' as never, burst: '5' as never })).rejects.toThrow(
      /rate must .*, got "1"$/,
    );
    await expect(limiter.consume('a', { rate: 1, burst: '5' as never })).rejects.toThrow(
      'RateLimiter: limit "default": burst must be a finite number >= 1, got "5"',
    );
    await expect(limiter.consume('a', { rate: 1 }, { cost: '2' as never })).rejects.toThrow(
      'RateLimiter.consume: cost must be a positive number, got "2"',
    );
    await expect(limiter.consume('a', 'jobs' as never)).rejects.toThrow(
      'RateLimiter: limit must be an object like { name, rate, burst }, got "jobs"',
    );
  });

  it('refuses a horizon beyond 1e14 ms, naming the option (issue 15, item 6)', async () => {
    await expect(limiter.consume('a', { rate: '1/day', burst: 1e15 })).rejects.toThrow(
      /^RateLimiter: limit "default": burst x the interval between tokens/,
    );
    await expect(limiter.consume('a', { rate: 5e-324 })).rejects.toThrow(
      /^RateLimiter: limit "default": rate must be at least 1e-11 tokens per second/,
    );
    await expect(limiter.consume('a', { name: 'longest', rate: 1e-11 })).resolves.toMatchObject({
      allowed: true,
      remaining: 0,
    });
  });
});

describe('RateLimiter with a clock gone wrong (issue 15, item 7)', () => {
  it.each([NaN, -1, 1e300])(
    '%p: every operation fails like a store, naming the reading',
    async (reading) => {
      const limiter = new RateLimiter(new MemoryStore(), new ManualClock(reading), {
        failMode: 'open',
        ipv6Subnet: 64,
        errorFormat: 'nest',
      });
      const error = /^Rate-limit clock read .*, not a time in \[0, 8640000000000000\] ms$/;
      await expect(limiter.consume('a', { rate: 1 })).rejects.toThrow(error);
      await expect(limiter.peek('a', { rate: 1 })).rejects.toThrow(error);
      await expect(limiter.reset('a', { rate: 1 })).rejects.toThrow(error);
    },
  );
});
