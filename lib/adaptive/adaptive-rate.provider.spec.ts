import 'reflect-metadata';
import { Logger, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ManualClock } from '../clock.js';
import { RATE_LIMIT_CLOCK } from '../rate-limit.constants.js';
import type { AdaptiveRateChange } from './adaptive-rate-change.interface.js';
import { AdaptiveRateProvider } from './adaptive-rate.provider.js';
import { resolveAdaptiveOptions } from './resolve-adaptive-options.js';

const declared = { rate: 100, burst: 20 };
const config = (options = {}) =>
  resolveAdaptiveOptions({ jitter: 0, max: 200, ...options }, declared, 'test');

/** Captures what the provider logs, through Nest's static logger override. */
class RecordingLogger implements LoggerService {
  readonly lines: [level: string, message: string, ...rest: unknown[]][] = [];
  log(message: string, ...rest: unknown[]) {
    this.lines.push(['log', message, ...rest]);
  }
  warn(message: string, ...rest: unknown[]) {
    this.lines.push(['warn', message, ...rest]);
  }
  error(message: string, ...rest: unknown[]) {
    this.lines.push(['error', message, ...rest]);
  }
}

type LoggerStatics = { staticInstanceRef: unknown };

describe('AdaptiveRateProvider', () => {
  let clock: ManualClock;
  let provider: AdaptiveRateProvider;
  let logger: RecordingLogger;
  let originalLogger: unknown;

  beforeEach(() => {
    originalLogger = (Logger as unknown as LoggerStatics).staticInstanceRef;
    logger = new RecordingLogger();
    Logger.overrideLogger(logger);
    clock = new ManualClock(0);
    provider = new AdaptiveRateProvider(clock);
  });

  afterEach(() => {
    (Logger as unknown as LoggerStatics).staticInstanceRef = originalLogger;
  });

  /** `n` outcomes spread over the next 900 ms of the module clock, then the clock at the window's end. */
  function during(name: string, outcome: 'success' | 'failure', n = 30): void {
    const start = clock.now();
    for (let i = 0; i < n; i += 1) {
      clock.set(start + (i * 900) / n);
      provider.report(name, outcome);
    }
    clock.set(start + 1000);
  }

  it('starts at the declared bucket and moves with reported outcomes, on the module clock', () => {
    provider.register('search', config());
    expect(provider.effectiveLimit('search')).toEqual(declared);
    expect(provider.current('search')).toBe(100);
    during('search', 'failure');
    expect(provider.current('search')).toBe(80);
    expect(provider.effectiveLimit('search')).toEqual({ rate: 80, burst: 16 });
  });

  it('returns the same bucket object while nothing changed', () => {
    provider.register('search', config());
    const a = provider.effectiveLimit('search');
    clock.advance(5000);
    expect(provider.effectiveLimit('search')).toBe(a);
  });

  it('register is idempotent for the same name and an equal configuration', () => {
    provider.register('search', config());
    during('search', 'failure');
    provider.register('search', config()); // resolved again elsewhere: same limit
    expect(provider.current('search')).toBe(80);
    expect(provider.names()).toEqual(['search']);
  });

  it('register accepts the declared bucket as a third argument and checks it', () => {
    provider.register('a', config(), { rate: 100, burst: 20 });
    expect(() => provider.register('b', config(), { rate: 50, burst: 20 })).toThrow(
      'Adaptive rate limit "b": declared 50/s burst 20 does not match the bucket its adaptive options were resolved for',
    );
  });

  it('register throws for the same name with a different configuration, naming the difference', () => {
    provider.register('search', config());
    expect(() => provider.register('search', config({ decrease: 0.5 }))).toThrow(
      'Adaptive rate limit "search" is already registered with a different configuration (adaptive.decrease: 0.8 vs 0.5)',
    );
  });

  it('report throws for an unknown name (a typo must be loud), listing the known ones', () => {
    provider.register('search', config());
    expect(() => provider.report('serch', 'failure')).toThrow(
      'Unknown adaptive rate limit "serch" (registered: "search")',
    );
    expect(() => new AdaptiveRateProvider(clock).report('x', 'success')).toThrow(
      '(registered: none)',
    );
    expect(() => provider.effectiveLimit('nope')).toThrow('Unknown adaptive rate limit "nope"');
  });

  it('report rejects malformed outcomes', () => {
    provider.register('search', config());
    expect(() => provider.report('search', { latencyMs: -5 })).toThrow(TypeError);
  });

  it('current is undefined for an unknown name, has() tells', () => {
    expect(provider.current('nope')).toBeUndefined();
    provider.register('search', config());
    expect(provider.has('search')).toBe(true);
    expect(provider.has('nope')).toBe(false);
  });

  it('logs decreases as warnings and increases as logs, in the RateLimit context', () => {
    provider.register('search', config({ increase: 10, healthyWindows: 1 }));
    during('search', 'failure');
    provider.current('search');
    during('search', 'success');
    provider.current('search');
    expect(logger.lines).toEqual([
      [
        'warn',
        'Adaptive limit "search": rate 100 -> 80.0/s (burst 16) after 30/30 bad outcomes (100%)',
        'RateLimit',
      ],
      [
        'log',
        'Adaptive limit "search": rate 80.0 -> 90.0/s (burst 18) after 0/30 bad outcomes (0%)',
        'RateLimit',
      ],
    ]);
  });

  it('sends changes to onRateChange listeners until they unsubscribe', () => {
    provider.register('search', config());
    const seen: AdaptiveRateChange[] = [];
    const off = provider.onRateChange((change) => seen.push(change));
    during('search', 'failure');
    provider.current('search');
    expect(seen).toEqual([
      {
        name: 'search',
        previousRate: 100,
        rate: 80,
        burst: 16,
        direction: 'decrease',
        window: { startMs: 0, endMs: 1000, outcomes: 30, failures: 30 },
      },
    ]);
    off();
    during('search', 'failure');
    provider.current('search');
    expect(seen).toHaveLength(1);
    expect(provider.current('search')).toBe(64);
  });

  it('a listener that throws is logged and does not reach the request, nor stop other listeners', () => {
    provider.register('search', config());
    const seen: number[] = [];
    provider.onRateChange(() => {
      throw new Error('boom');
    });
    provider.onRateChange((change) => seen.push(change.rate));
    during('search', 'failure');
    expect(() => provider.effectiveLimit('search')).not.toThrow();
    expect(seen).toEqual([80]);
    const error = logger.lines.find(([level]) => level === 'error');
    expect(error?.[1]).toBe('onRateChange listener failed for adaptive limit "search"');
    expect(String(error?.[2])).toContain('boom');
  });

  it('keeps limits independent', () => {
    provider.register('a', config());
    provider.register('b', config());
    during('a', 'failure');
    expect([provider.current('a'), provider.current('b')]).toEqual([80, 100]);
  });

  describe('in a Nest module', () => {
    it('takes the module clock from RATE_LIMIT_CLOCK', async () => {
      const moduleRef = await Test.createTestingModule({
        providers: [AdaptiveRateProvider, { provide: RATE_LIMIT_CLOCK, useValue: clock }],
      }).compile();
      const fromNest = moduleRef.get(AdaptiveRateProvider);
      fromNest.register('search', config());
      clock.set(10_000);
      fromNest.current('search'); // opens the window at 10 000
      for (let i = 0; i < 30; i += 1) fromNest.report('search', 'failure');
      expect(fromNest.current('search')).toBe(100);
      clock.set(11_000);
      expect(fromNest.current('search')).toBe(80);
      await moduleRef.close();
    });

    it('falls back to the system clock without one', async () => {
      const moduleRef = await Test.createTestingModule({
        providers: [AdaptiveRateProvider],
      }).compile();
      const fromNest = moduleRef.get(AdaptiveRateProvider);
      fromNest.register('search', config());
      expect(fromNest.current('search')).toBe(100);
      await moduleRef.close();
    });
  });
});
