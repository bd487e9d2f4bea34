/**
 * The store-wide timeout timer: calls expire at their deadline (not before,
 * not much later), answered calls never do, a call with an earlier deadline
 * than the armed one is still timed out on time, and the timer never keeps
 * the process alive.
 */
import { setTimeout as sleep } from 'node:timers/promises';
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

/** Slack for a loaded 2-core machine: timers run late. */
const LATE_MS = 150;

describe('Deadlines', () => {
  it('expires a waiting call once its deadline has passed, never before', async () => {
    const deadlines = new Deadlines();
    const call = watched(40);
    deadlines.add(call);
    await sleep(20);
    expect(call.expiredAt).toBeUndefined();
    await sleep(40 + LATE_MS);
    expect(call.expiredAt).toBeDefined();
    expect(call.expiredAt!).toBeGreaterThanOrEqual(call.deadline);
    expect(call.expiredAt! - call.deadline).toBeLessThan(LATE_MS);
  });

  it('never expires a call removed (answered) before its deadline', async () => {
    const deadlines = new Deadlines();
    const answered = watched(20);
    const waiting = watched(30);
    deadlines.add(answered);
    deadlines.add(waiting);
    deadlines.remove(answered);
    await sleep(30 + LATE_MS);
    expect(answered.expiredAt).toBeUndefined();
    expect(waiting.expiredAt).toBeDefined();
  });

  it('times out a call whose deadline comes before the one the timer is armed for', async () => {
    const deadlines = new Deadlines();
    const long = watched(5_000);
    const short = watched(30);
    deadlines.add(long);
    deadlines.add(short);
    await sleep(30 + LATE_MS);
    expect(short.expiredAt).toBeDefined();
    expect(long.expiredAt).toBeUndefined();
    deadlines.remove(long);
  });

  it('expires calls added one after another, each at its own deadline', async () => {
    const deadlines = new Deadlines();
    const first = watched(20);
    deadlines.add(first);
    await sleep(10);
    const second = watched(20 + LATE_MS + 200);
    deadlines.add(second);
    await sleep(20 + LATE_MS);
    expect(first.expiredAt).toBeDefined();
    expect(second.expiredAt).toBeUndefined();
    await sleep(200 + LATE_MS);
    expect(second.expiredAt).toBeDefined();
    expect(second.expiredAt!).toBeGreaterThanOrEqual(second.deadline);
  });

  it("arms an unref()'d timer: a waiting call does not keep the process alive", () => {
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
  it('keeps watching the others when the first, a middle or the last call is removed, and ignores a removal of a call not watched', async () => {
    const deadlines = new Deadlines();
    const calls = [20, 20, 20, 20, 20].map((ms) => watched(ms));
    for (const call of calls) deadlines.add(call);
    deadlines.remove(calls[0]!);
    deadlines.remove(calls[2]!);
    deadlines.remove(calls[4]!);
    deadlines.remove(calls[4]!);
    deadlines.remove(watched(20));
    await sleep(20 + LATE_MS);
    expect(calls.map((call) => call.expiredAt !== undefined)).toEqual([
      false,
      true,
      false,
      true,
      false,
    ]);
  });
});
