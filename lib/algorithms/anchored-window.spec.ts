import type { FixedWindowLimit } from '../store/rate-limit-store.interface.js';
import { anchoredWindowBlock, fixedWindowConsume } from './fixed-window.js';
import type { WindowState } from './window-state.js';

/** Not a multiple of the window: an epoch-aligned window would start elsewhere. */
const T = 1_700_000_012_345;
const limit: FixedWindowLimit = {
  algorithm: 'fixed-window',
  quota: 2,
  windowMs: 10_000,
  anchor: 'first-hit',
};

/** Charge one request at `now`, keeping the state when admitted (as a store does). */
function hit(state: WindowState | undefined, now: number) {
  const outcome = fixedWindowConsume(state, now, limit, 1);
  return { next: outcome.decision.allowed ? outcome.state : state, decision: outcome.decision };
}

describe('fixed window anchored at the first hit (throttler semantics)', () => {
  it('starts the window at the first request, not on an epoch multiple', () => {
    const { next, decision } = hit(undefined, T);
    expect(next).toMatchObject({ start: T, end: T + 10_000, count: 1 });
    expect(decision).toMatchObject({ allowed: true, remaining: 1, resetMs: 10_000 });
  });

  it('denies past the quota until the window ends, then opens a window at the next hit', () => {
    let state = hit(undefined, T).next;
    state = hit(state, T + 4_000).next;
    const denied = hit(state, T + 9_999);
    expect(denied.decision).toMatchObject({ allowed: false, retryAfterMs: 1 });
    const fresh = hit(state, T + 10_000);
    expect(fresh.decision).toMatchObject({ allowed: true, remaining: 1 });
    expect(fresh.next).toMatchObject({ start: T + 10_000, end: T + 20_000 });
  });

  it('a block holds the window full until its end, past the window, then starts over', () => {
    // The window is full (two hits at T, T + 1); the denial's block replaces it.
    const blocked = anchoredWindowBlock(T + 2, limit, 15_000);
    expect(blocked).toMatchObject({ start: T + 2, end: T + 15_002, count: 2 });
    expect(hit(blocked, T + 15_001).decision).toMatchObject({ allowed: false, retryAfterMs: 1 });
    expect(hit(blocked, T + 15_002).decision).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('a block shorter than the window ends early: the next hit opens a fresh window', () => {
    // The window is full (two hits at T, T + 1); the denial's block replaces it.
    const blocked = anchoredWindowBlock(T + 2, limit, 5_000);
    expect(hit(blocked, T + 5_002).decision).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('a block longer than the window outlasts it: denied until the block ends', () => {
    // The window is full (two hits at T, T + 1); the denial's block replaces it.
    const blocked = anchoredWindowBlock(T + 9_000, limit, 20_000);
    expect(hit(blocked, T + 28_999).decision).toMatchObject({ allowed: false, retryAfterMs: 1 });
    expect(hit(blocked, T + 29_000).decision).toMatchObject({ allowed: true, remaining: 1 });
  });
});
