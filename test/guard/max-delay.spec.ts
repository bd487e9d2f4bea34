/**
 * `maxDelay`, through the guard: a request the limit would deny but could
 * admit within `maxDelay` reserves its token and waits for it on the
 * module's clock (its promise resolves once the ManualClock is advanced to
 * its time, never before); requests queue in order, one interval apart;
 * beyond `maxDelay` a request is denied at once; a client that goes away
 * while waiting gives its token back. End to end: test/delay/.
 */
import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';
import {
  createGuardHarness,
  FakeResponse,
  flushPromises,
  type GuardHarness,
  type GuardOutcome,
} from '../utils/guard-harness.js';

@Controller('smooth')
class DelayController {
  @RateLimit({ name: 'smooth', rate: 10, burst: 1, key: 'global', maxDelay: 2_000 })
  @Get('2s')
  twoSeconds() {}

  @RateLimit({ name: 'smooth', rate: 10, burst: 1, key: 'global', maxDelay: '300ms' })
  @Get('300ms')
  short() {}

  @RateLimit({ name: 'slow', rate: 1, burst: 1, key: 'global', maxDelay: '5s' })
  @Get('slow')
  slow() {}
}

/** Starts `count` evaluations at the current time; records when each settles (the clock's time then). */
function burst(h: GuardHarness, handler: string, count: number) {
  const settledAt: (number | undefined)[] = Array(count).fill(undefined);
  const outcomes = Array.from({ length: count }, (_, n) =>
    h.canActivate(handler).then((outcome) => {
      settledAt[n] = h.clock.now();
      return outcome;
    }),
  );
  return { settledAt, outcomes };
}

describe('guard: maxDelay', () => {
  let h: GuardHarness;
  beforeEach(async () => {
    h = await createGuardHarness(DelayController);
  });
  afterEach(() => h.close());
  const start = () => h.clock.now();

  it('an admitted request waits for its token: its promise resolves only once the clock reaches it', async () => {
    const t0 = start();
    expect(await h.canActivate('twoSeconds')).toMatchObject({ allowed: true, status: 200 });
    let second: GuardOutcome | undefined;
    const pending = h.canActivate('twoSeconds').then((outcome) => (second = outcome));
    await flushPromises();
    expect(second).toBeUndefined();
    h.clock.advance(99);
    await flushPromises();
    expect(second).toBeUndefined();
    h.clock.advance(1);
    await pending;
    expect(second).toMatchObject({ allowed: true, status: 200 });
    expect(h.clock.now() - t0).toBe(100);
  });

  it('20 at once, burst 1 at 10/s, maxDelay 2 s: all admitted, in order, 100 ms apart', async () => {
    const t0 = start();
    const { settledAt, outcomes } = burst(h, 'twoSeconds', 20);
    for (let step = 0; step < 19; step++) {
      await flushPromises();
      h.clock.advance(100);
    }
    const results = await Promise.all(outcomes);
    expect(results.map((outcome) => outcome.status)).toEqual(Array(20).fill(200));
    expect(settledAt.map((at) => at! - t0)).toEqual(Array.from({ length: 20 }, (_, n) => 100 * n));
  });

  it('maxDelay 300 ms: exactly the first 4 are admitted, the others denied at once with a Retry-After', async () => {
    const t0 = start();
    const { settledAt, outcomes } = burst(h, 'short', 8);
    await flushPromises();
    // The 4 beyond maxDelay are answered without the clock moving.
    expect(settledAt.slice(4)).toEqual(Array(4).fill(t0));
    for (let step = 0; step < 3; step++) {
      h.clock.advance(100);
      await flushPromises();
    }
    const results = await Promise.all(outcomes);
    expect(results.map((outcome) => outcome.status)).toEqual([
      ...Array(4).fill(200),
      ...Array(4).fill(429),
    ]);
    expect(settledAt.slice(0, 4).map((at) => at! - t0)).toEqual([0, 100, 200, 300]);
    expect(results[4]!.headers['retry-after']).toBe('1');
  });

  it('a client that goes away while waiting gives its token back: the next request takes its place', async () => {
    const t0 = start();
    expect((await h.canActivate('slow')).allowed).toBe(true);
    const leaving = new FakeResponse();
    const left = h.canActivate('slow', undefined, leaving);
    await flushPromises();
    leaving.abort();
    expect((await left).allowed).toBe(false);
    // Its token (due at +1 s) is free again: the next request gets it, not the one after.
    let next: GuardOutcome | undefined;
    const pending = h.canActivate('slow').then((outcome) => (next = outcome));
    await flushPromises();
    h.clock.advance(999);
    await flushPromises();
    expect(next).toBeUndefined();
    h.clock.advance(1);
    await pending;
    expect(next).toMatchObject({ allowed: true, status: 200 });
    expect(h.clock.now() - t0).toBe(1_000);
  });
});
