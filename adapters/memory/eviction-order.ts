import { expiryOf, type BucketState } from '../../lib/algorithms/algorithm.js';
import type { WindowState } from '../../lib/algorithms/window-state.js';

/**
 * Which of two held states `MemoryStore` evicts first at `maxKeys`: the one
 * whose loss would admit less. Pure: states, time and whether each serves a
 * block in, the answer out.
 *
 * 1. A state that serves a block (`block`: `blockDuration`, throttler's
 *    block) is kept over any other: losing it ends a penalty early, for a
 *    caller already known to be over its limit.
 * 2. Token buckets (GCRA, settle debts included): the earliest theoretical
 *    arrival time goes, the bucket closest to full. Under one limit (a
 *    shard holds one namespace, so one limit) that is the fewest tokens
 *    handed back.
 * 3. Windows (fixed, anchored, calendar, sliding): the least count held at
 *    `now` goes (a sliding window's previous count by its weight), then,
 *    among equal counts, the one that ends first. Not the end first: a
 *    window anchored at a caller's first hit before a flood ends before the
 *    flood's, though it holds the whole quota and each flood window one.
 *
 * States of two kinds under one namespace only meet when a store is called
 * directly with keys of its own (no namespace): then the one that stops
 * mattering first goes, as before these rules.
 *
 * `now` is in the store's relative frame, `origin` its absolute 0 (windows
 * hold absolute times).
 *
 * @internal
 */
export function evictsBefore(
  a: BucketState,
  aBlocked: boolean,
  b: BucketState,
  bBlocked: boolean,
  now: number,
  origin: number,
): boolean {
  if (aBlocked !== bBlocked) return bBlocked;
  if (typeof a === 'number' && typeof b === 'number') return a < b;
  if (typeof a === 'number' || typeof b === 'number')
    return expiryOf(a, origin) < expiryOf(b, origin);
  const at = now + origin;
  const heldA = windowHeld(a, at);
  const heldB = windowHeld(b, at);
  return heldA !== heldB ? heldA < heldB : a.expires < b.expires;
}

/**
 * What a window state still counts at `at` (absolute ms): what forgetting it
 * would hand back. Fixed windows: the count until the end. Sliding windows:
 * the weighted estimate (`sliding-window.ts`), the count itself becoming the
 * previous one after the end. 0 once it expires.
 */
export function windowHeld(state: WindowState, at: number): number {
  if (at >= state.expires) return 0;
  const length = state.end - state.start;
  if (at < state.end) {
    const weight = length > 0 ? Math.min(1, Math.max(0, 1 - (at - state.start) / length)) : 0;
    return state.count + state.previous * weight;
  }
  return length > 0 ? state.count * Math.max(0, 1 - (at - state.end) / length) : 0;
}
