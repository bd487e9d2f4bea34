/**
 * `RateLimiter.acquire()` in application code, on the memory, Redis and
 * two-tier stores, time from the test's clock: a caller waits for its
 * reserved token instead of polling, callers are served in order, a wait
 * that cannot end within `maxWaitMs` is refused at once, and an aborted
 * wait gives its token back.
 */
import type { INestApplication } from '@nestjs/common';
import {
  ManualClock,
  RateLimiter,
  RateLimitExceededException,
  RateLimitModule,
} from 'nestjs-holdup';
import { RateLimitEngine } from '../../lib/engine/rate-limit-engine.js';
import { createApp } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';

const START = 1_700_000_000_000;
const PARTNER = { name: 'partner', rate: 10, burst: 1 };

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe.each(ALL_STORES)('RateLimiter.acquire (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);
  let app: INestApplication;
  let clock: ManualClock;
  let limiter: RateLimiter;
  /** The engine behind the service and the guard: its queue of callers waiting for a reserved token. */
  let engine: RateLimitEngine;
  beforeEach(async () => {
    clock = new ManualClock(START);
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ clock, store: makeStore(`acquire-${kind}`) })],
    });
    limiter = app.get(RateLimiter);
    engine = app.get(RateLimitEngine);
  });
  afterEach(() => app.close());

  it('callers proceed one token apart, in order', async () => {
    const proceeded: [number, number][] = [];
    const calls = [0, 1, 2, 3].map(async (n) => {
      await limiter.acquire('api', PARTNER);
      proceeded.push([n, clock.now() - START]);
    });
    await until(() => engine.waits.size === 3, 'three callers wait');
    for (let step = 1; step <= 3; step++) {
      clock.advance(100);
      await until(() => proceeded.length === step + 1, `caller ${step} proceeds`);
    }
    await Promise.all(calls);
    expect(proceeded).toEqual([
      [0, 0],
      [1, 100],
      [2, 200],
      [3, 300],
    ]);
  });

  it('a wait longer than maxWaitMs is refused at once, reserving nothing', async () => {
    await limiter.acquire('api', PARTNER);
    const waiting = limiter.acquire('api', PARTNER, { maxWaitMs: 100 }); // due in 100 ms
    await until(() => engine.waits.size === 1, 'one caller waits');
    const refused = await limiter
      .acquire('api', PARTNER, { maxWaitMs: 150 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitExceededException);
    expect((refused as RateLimitExceededException).retryAfter).toBe(1); // 50 ms, in whole seconds
    clock.advance(100);
    await waiting;
    // Nothing was reserved by the refused call: the next token is due 100 ms after the last one.
    const next = limiter.acquire('api', PARTNER, { maxWaitMs: 100 });
    await until(() => engine.waits.size === 1, 'the next caller waits');
    clock.advance(100);
    await expect(next).resolves.toMatchObject({ allowed: true });
  });

  it("an aborted wait rejects with the signal's reason and gives its token back", async () => {
    await limiter.acquire('api', PARTNER);
    const controller = new AbortController();
    const aborted = limiter
      .acquire('api', PARTNER, { signal: controller.signal })
      .catch((error: unknown) => error);
    await until(() => engine.waits.size === 1, 'the caller waits');
    controller.abort(new Error('shutting down'));
    expect(await aborted).toEqual(new Error('shutting down'));
    expect(engine.waits.size).toBe(0);
    // Its token (due at +100 ms) goes to the next caller.
    let proceededAt = -1;
    const next = limiter.acquire('api', PARTNER).then(() => (proceededAt = clock.now() - START));
    await until(() => engine.waits.size === 1, 'the next caller waits');
    clock.advance(100);
    await next;
    expect(proceededAt).toBe(100);
  });

  it('refuses bad options with a TypeError naming them, and an aborted signal at once', async () => {
    await expect(limiter.acquire('api', PARTNER, { maxWaitMs: -1 })).rejects.toThrow(
      'RateLimiter.acquire: maxWaitMs must be a number of milliseconds from 0 to 3600000, got -1',
    );
    await expect(limiter.acquire('api', PARTNER, { cost: 0 })).rejects.toThrow(
      'RateLimiter.acquire: cost must be a positive number, got 0',
    );
    await expect(
      limiter.acquire('api', PARTNER, { signal: AbortSignal.abort(new Error('gone')) }),
    ).rejects.toThrow('gone');
  });
});
