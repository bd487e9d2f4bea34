/**
 * Real-time waits for the specs that need them (a store's background work, a
 * real server). Specs driven by a `ManualClock` never sleep.
 */
import { setTimeout as delay } from 'node:timers/promises';

/** Resolves after `ms` milliseconds of real time. */
export function sleep(ms: number): Promise<void> {
  return delay(ms);
}

/** Polls `condition` every 10 ms until it holds; rejects after `timeoutMs`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}
