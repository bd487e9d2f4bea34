import { ManualClock } from '../../clock.js';
import { WaitQueue } from './wait-queue.js';

describe('WaitQueue', () => {
  it('releases waiters in the order of their times, ties in arrival order, with one timer', async () => {
    const clock = new ManualClock(1_000);
    const queue = new WaitQueue(clock);
    const order: string[] = [];
    const waits = [
      ['c', 300],
      ['a', 100],
      ['b', 100],
      ['d', 200],
    ] as const;
    const done = waits.map(([name, ms]) => queue.wait(ms)!.done.then(() => order.push(name)));
    expect(clock.pendingTimers).toBe(1);
    clock.advance(99);
    await Promise.resolve();
    expect(order).toEqual([]);
    clock.advance(1);
    await Promise.resolve();
    clock.advance(150);
    await Promise.all(done.slice(1));
    expect(order).toEqual(['a', 'b', 'd']);
    expect(queue.size).toBe(1);
    clock.advance(50);
    await done[0];
    expect(order).toEqual(['a', 'b', 'd', 'c']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('is bounded: past its capacity a wait is refused; cancelled waits free their place', () => {
    const queue = new WaitQueue(new ManualClock(), 2);
    const first = queue.wait(10)!;
    expect(queue.wait(10)).toBeDefined();
    expect(queue.wait(10)).toBeUndefined();
    first.cancel();
    expect(queue.size).toBe(1);
    expect(queue.wait(10)).toBeDefined();
  });

  it('bounds what one key holds: past its cap that key is refused, others still wait; places free as waits end', async () => {
    const clock = new ManualClock();
    const queue = new WaitQueue(clock, 10, 2);
    const a1 = queue.wait(100, 'a')!;
    expect(queue.wait(200, 'a')).toBeDefined();
    expect(queue.wait(300, 'a')).toBeUndefined();
    expect(queue.fullFor('a')).toBe('key');
    expect(queue.wait(300, 'b')).toBeDefined();
    expect(queue.wait(300)).toBeDefined(); // no key: only the process's bound
    expect(queue.waitingFor('a')).toBe(2);
    a1.cancel();
    expect(queue.wait(300, 'a')).toBeDefined();
    clock.advance(300);
    await Promise.resolve();
    expect([queue.waitingFor('a'), queue.waitingFor('b'), queue.size]).toEqual([0, 0, 0]);
    expect((queue as unknown as { byKey: Map<string, number> }).byKey.size).toBe(0);
  });

  it('drain releases everybody at once (shutdown)', async () => {
    const queue = new WaitQueue(new ManualClock());
    const waits = [queue.wait(1_000)!, queue.wait(5_000)!];
    queue.drain();
    await Promise.all(waits.map((w) => w.done));
    expect(queue.size).toBe(0);
  });

  it('keeps no more cancelled entries than twice its capacity', () => {
    const queue = new WaitQueue(new ManualClock(), 10);
    for (let i = 0; i < 1_000; i++) queue.wait(60_000)!.cancel();
    expect((queue as unknown as { heap: unknown[] }).heap.length).toBeLessThanOrEqual(20);
  });
});
