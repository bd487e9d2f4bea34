/**
 * The store-wide timeout timer: calls expire at their deadline (not before,
 * not much later), answered calls never do, a call with an earlier deadline
 * than the armed one is still timed out on time, and the timer never keeps
 * the process alive. Time is jest's fake clock (`setTimeout`, `setImmediate` and
 * `performance.now()` together), so the checks are exact on a loaded machine.
 */
import { afterEach, beforeEach, jest } from '@jest/globals';
import { Deadlines, type Waiting } from './deadlines.js';

interface Watched extends Waiting {
  expiredAt: number | undefined;
}

function watched(inMs: number): Watched {
  const call: Watched = {
    deadline: performance.now() + inMs,
    expiredAt: undefined,
    expire: () => {
      call.expiredAt = performance.now();
    },
  };
  return call;
}

/** Moves the fake clock on by `ms`, running the timers and immediates due. */
function sleep(ms: number): void {
  jest.advanceTimersByTime(ms);
}

/** How late past its deadline the timer may expire a call: its delay is rounded up to the next ms. */
const LATE_MS = 1;

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

describe('Deadlines', () => {
  it('expires a waiting call once its deadline has passed, never before', () => {
    const deadlines = new Deadlines();
    const call = watched(40);
    deadlines.add(call);
    sleep(20);
    expect(call.expiredAt).toBeUndefined();
    sleep(40 + LATE_MS);
    expect(call.expiredAt).toBeDefined();
    expect(call.expiredAt!).toBeGreaterThanOrEqual(call.deadline);
    expect(call.expiredAt! - call.deadline).toBeLessThanOrEqual(LATE_MS);
  });

  it('never expires a call removed (answered) before its deadline', () => {
    const deadlines = new Deadlines();
    const answered = watched(20);
    const waiting = watched(30);
    deadlines.add(answered);
    deadlines.add(waiting);
    deadlines.remove(answered);
    sleep(30 + LATE_MS);
    expect(answered.expiredAt).toBeUndefined();
    expect(waiting.expiredAt).toBeDefined();
  });

  it('times out a call whose deadline comes before the one the timer is armed for', () => {
    const deadlines = new Deadlines();
    const long = watched(5_000);
    const short = watched(30);
    deadlines.add(long);
    deadlines.add(short);
    sleep(30 + LATE_MS);
    expect(short.expiredAt).toBeDefined();
    expect(long.expiredAt).toBeUndefined();
    deadlines.remove(long);
  });

  it('expires calls added one after another, each at its own deadline', () => {
    const deadlines = new Deadlines();
    const first = watched(20);
    deadlines.add(first);
    sleep(10);
    const second = watched(20 + LATE_MS + 200);
    deadlines.add(second);
    sleep(20 + LATE_MS);
    expect(first.expiredAt).toBeDefined();
    expect(second.expiredAt).toBeUndefined();
    sleep(200 + LATE_MS);
    expect(second.expiredAt).toBeDefined();
    expect(second.expiredAt!).toBeGreaterThanOrEqual(second.deadline);
  });

  it("arms an unref()'d timer: a waiting call does not keep the process alive", () => {
    jest.useRealTimers();
    const deadlines = new Deadlines();
    const call = watched(60_000);
    deadlines.add(call);
    const timer = (deadlines as unknown as { timer: NodeJS.Timeout | undefined }).timer;
    expect(timer).toBeDefined();
    expect(timer!.hasRef()).toBe(false);
    deadlines.remove(call);
  });
});

describe('Deadlines list', () => {
  it('keeps watching the others when the first, a middle or the last call is removed, and ignores a removal of a call not watched', () => {
    const deadlines = new Deadlines();
    const calls = [20, 20, 20, 20, 20].map((ms) => watched(ms));
    for (const call of calls) deadlines.add(call);
    deadlines.remove(calls[0]!);
    deadlines.remove(calls[2]!);
    deadlines.remove(calls[4]!);
    deadlines.remove(calls[4]!);
    deadlines.remove(watched(20));
    sleep(20 + LATE_MS);
    expect(calls.map((call) => call.expiredAt !== undefined)).toEqual([
      false,
      true,
      false,
      true,
      false,
    ]);
  });
});
