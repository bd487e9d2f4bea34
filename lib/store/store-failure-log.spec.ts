import { jest } from '@jest/globals';
import type { Logger } from '@nestjs/common';
import { StoreFailureLog } from './store-failure-log.js';

describe('StoreFailureLog', () => {
  const lines: string[] = [];
  const logger = {
    error: (message: string) => lines.push(`error: ${message}`),
    log: (message: string) => lines.push(`log: ${message}`),
  } as unknown as Logger;
  let now = 0;
  let log: StoreFailureLog;
  beforeEach(() => {
    lines.length = 0;
    now = 0;
    jest.useFakeTimers();
    log = new StoreFailureLog(logger, () => now);
  });
  afterEach(() => {
    log.close();
    jest.useRealTimers();
  });

  it('one line per burst and its recovery, with the count', () => {
    for (let i = 0; i < 5; i++) expect(log.failed(new Error('down'))).toBe(i + 1);
    expect(log.succeeded()).toBe(5);
    expect(log.succeeded()).toBe(0);
    expect(lines).toEqual([
      'error: Rate-limit store failed; applying failMode until it recovers: down',
      'log: Rate-limit store recovered after 5 failed decision(s)',
    ]);
  });

  it('a store failing and recovering call after call (writes refused, reads answered): a bounded number of lines per minute, the rest counted and said at its end', () => {
    // 10,000 alternating calls within one minute: each failure is a burst of its own.
    for (let i = 0; i < 5_000; i++) {
      now = i * 10;
      expect(log.failed(new Error('OOM'))).toBe(1);
      expect(log.succeeded()).toBe(1);
    }
    expect(lines).toHaveLength(6); // 3 bursts announced, 3 recoveries
    jest.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(7);
    expect(lines[6]).toBe(
      'error: Rate-limit store failed 4997 more decision(s) in outages that came and went (more than 3 in a minute, not logged one by one); failMode was applied to each',
    );
    // A minute later, a burst is announced again at once.
    now = 120_000;
    log.failed(new Error('down'));
    expect(lines).toHaveLength(8);
  });

  it('a burst still open when its minute is said is a known one: its recovery is said', () => {
    for (let i = 0; i < 3; i++) {
      log.failed(new Error('x'));
      log.succeeded();
    }
    log.failed(new Error('x'));
    log.failed(new Error('x'));
    expect(lines).toHaveLength(6);
    log.close(); // shutdown says the count
    expect(lines[6]).toContain('failed 2 more decision(s)');
    log.succeeded();
    expect(lines[7]).toBe('log: Rate-limit store recovered after 2 failed decision(s)');
  });
});
