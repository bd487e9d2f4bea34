import { ManualClock } from '../../clock.js';
import {
  AdaptiveConcurrency,
  type AdaptiveAnswer,
  type AdaptiveTicket,
} from './adaptive-concurrency.js';
import { GRADIENT_DEFAULTS } from './gradient-limit.js';
import { admits } from './partition-admission.js';

const controller = { ...GRADIENT_DEFAULTS, min: 2, max: 2, initial: 2 };

function ticket(answer: AdaptiveAnswer | Promise<AdaptiveAnswer>): AdaptiveTicket {
  if (answer instanceof Promise || !answer.allowed) throw new Error('expected a slot at once');
  return answer.ticket;
}

describe('AdaptiveConcurrency: the backlog', () => {
  const make = (clock: ManualClock) =>
    new AdaptiveConcurrency(
      { controller, partitions: [], backlog: { size: 2, timeoutMs: 1000 } },
      clock,
    );

  it('holds callers for a free slot, newest first; refuses the one beyond its size at once', async () => {
    const clock = new ManualClock(0);
    const limiter = make(clock);
    const held = [ticket(limiter.acquire('k', 0)), ticket(limiter.acquire('k', 0))];
    const older = limiter.acquire('k', 0) as Promise<AdaptiveAnswer>;
    const newer = limiter.acquire('k', 0) as Promise<AdaptiveAnswer>;
    expect(limiter.acquire('k', 0)).toMatchObject({
      allowed: false,
      reason: 'limit',
      retryAfterMs: 1000,
    });
    expect(limiter.snapshot('k')).toMatchObject({ limit: 2, inFlight: 2, queued: 2 });
    held[0]!.release(false);
    expect(await newer).toMatchObject({ allowed: true });
    clock.advance(1000);
    expect(await older).toMatchObject({ allowed: false, reason: 'timeout' });
    expect(limiter.snapshot('k')).toMatchObject({ inFlight: 2, queued: 0 });
  });

  it('a caller that leaves while waiting takes nothing, and gives back nothing', async () => {
    const clock = new ManualClock(0);
    const limiter = make(clock);
    const held = [ticket(limiter.acquire('k', 0)), ticket(limiter.acquire('k', 0))];
    let leave!: () => void;
    const waiting = limiter.acquire('k', 0, (listener) => {
      leave = listener;
      return () => undefined;
    }) as Promise<AdaptiveAnswer>;
    leave();
    expect(await waiting).toMatchObject({ allowed: false, reason: 'gone' });
    expect(limiter.snapshot('k')).toMatchObject({ inFlight: 2, queued: 0 });
    held[0]!.release(false);
    held[0]!.release(false); // once only
    expect(limiter.snapshot('k')).toMatchObject({ inFlight: 1 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('a caller already gone is refused at once', () => {
    const limiter = make(new ManualClock(0));
    ticket(limiter.acquire('k', 0));
    ticket(limiter.acquire('k', 0));
    const answer = limiter.acquire('k', 0, (listener) => {
      listener();
      return () => undefined;
    });
    expect(answer).toMatchObject({ allowed: false, reason: 'gone' });
  });

  it('close refuses the waiters and cancels their timers', async () => {
    const clock = new ManualClock(0);
    const limiter = make(clock);
    ticket(limiter.acquire('k', 0));
    ticket(limiter.acquire('k', 0));
    const waiting = limiter.acquire('k', 0) as Promise<AdaptiveAnswer>;
    limiter.close();
    expect(await waiting).toMatchObject({ allowed: false });
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('partitions', () => {
  const counts = (inFlight: number[], active = [true, true]) => ({
    limit: 20,
    inFlight: inFlight.reduce((a, b) => a + b, 0),
    byPartition: inFlight,
    shares: [0.9, 0.1],
    active,
  });

  it('each partition has its share; beyond it, a partition borrows only what the active others leave', () => {
    expect(admits(counts([17, 0]), 0)).toBe(true); // critical under its 18
    expect(admits(counts([18, 0]), 0)).toBe(false); // batch keeps its 2 free
    expect(admits(counts([18, 0], [true, false]), 0)).toBe(true); // batch idle: borrowed
    expect(admits(counts([17, 2]), 1)).toBe(false); // batch beyond its 2, critical's one left is critical's
    expect(admits(counts([10, 2]), 1)).toBe(false); // critical's unused guarantee is kept
    expect(admits(counts([10, 2], [false, true]), 1)).toBe(true); // unless critical is idle
    expect(admits(counts([18, 2]), 0)).toBe(false); // full
  });

  it('the limiter counts per partition and sheds the lower one first', () => {
    const clock = new ManualClock(0);
    const limiter = new AdaptiveConcurrency(
      {
        controller: { ...controller, min: 10, max: 10, initial: 10 },
        partitions: [
          { name: 'critical', share: 0.9 },
          { name: 'batch', share: 0.1 },
        ],
        backlog: undefined,
      },
      clock,
    );
    for (let i = 0; i < 5; i++) ticket(limiter.acquire('k', 0));
    // batch borrows critical's unused slots beyond its own one? No: critical is active.
    ticket(limiter.acquire('k', 1));
    expect(limiter.acquire('k', 1)).toMatchObject({ allowed: false });
    clock.advance(2000); // critical idle for a second: its guarantee is lent
    for (let i = 0; i < 4; i++) ticket(limiter.acquire('k', 1));
    expect(limiter.snapshot('k')).toMatchObject({ inFlight: 10 });
  });
});
