/**
 * MemoryStore with window states beside token buckets: the sweep drops a
 * window once its state stops mattering (a fixed window's end, a sliding
 * window's end plus one window), and the key cap evicts window states too.
 */
import type { WindowLimit } from '../../lib/store/rate-limit-store.interface.js';
import { tokenBucket } from '../../test/utils/checks.js';
import { MemoryStore } from './memory.store.js';

const T = 1_700_000_040_000; // a multiple of 60 s
const fixed: WindowLimit = { algorithm: 'fixed-window', quota: 5, windowMs: 60_000 };
const sliding: WindowLimit = { algorithm: 'sliding-window', quota: 5, windowMs: 60_000 };

/** Enough decisions on one hot key for the incremental sweep to pass over every entry. */
function churn(store: MemoryStore, now: number): void {
  for (let i = 0; i < 5_000; i++)
    store.consume({ checks: [{ key: 'hot', limit: tokenBucket(1e9, 1e9), cost: 1 }], now });
}

describe('MemoryStore: window states', () => {
  it('sweeps fixed windows after their end and sliding ones a window later', () => {
    const store = new MemoryStore();
    for (let i = 0; i < 50; i++) {
      store.consume({ checks: [{ key: `f${i}`, limit: fixed, cost: 1 }], now: T });
      store.consume({ checks: [{ key: `s${i}`, limit: sliding, cost: 1 }], now: T });
    }
    churn(store, T + 59_000);
    expect(store.size).toBe(101); // 100 windows and the hot bucket
    churn(store, T + 60_000);
    expect(store.size).toBe(51); // the fixed windows ended; the sliding counts still weigh on the next window
    churn(store, T + 120_000);
    expect(store.size).toBe(1);
  });

  it('keeps to maxKeys with window states, evicting the one that stops mattering first', () => {
    const store = new MemoryStore({ maxKeys: 3 });
    store.consume({ checks: [{ key: 'late', limit: sliding, cost: 1 }], now: T }); // matters until T + 120 s
    store.consume({ checks: [{ key: 'early', limit: fixed, cost: 1 }], now: T }); // matters until T + 60 s
    store.consume({ checks: [{ key: 'bucket', limit: tokenBucket(1, 100), cost: 50 }], now: T }); // full again at T + 50 s
    store.consume({ checks: [{ key: 'new', limit: fixed, cost: 1 }], now: T + 1 });
    expect(store.size).toBe(3);
    expect(store.evictions).toBe(1);
    // The bucket (full soonest) went; the sliding window still counts its request.
    expect(
      store.peek({ checks: [{ key: 'late', limit: sliding }], now: T + 2 }).decisions[0],
    ).toMatchObject({ remaining: 4 });
    expect(
      store.peek({ checks: [{ key: 'bucket', limit: tokenBucket(1, 100) }], now: T + 2 })
        .decisions[0],
    ).toMatchObject({ remaining: 100 });
  });
});
