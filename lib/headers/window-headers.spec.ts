import { fixedWindowConsume } from '../algorithms/fixed-window.js';
import { slidingWindowConsume } from '../algorithms/sliding-window.js';
import type { WindowOutcome, WindowState } from '../algorithms/window-state.js';
import type { WindowLimit } from '../store/rate-limit-store.interface.js';
import { effectiveWindowSeconds, policyHeader, retryAfterSeconds } from './rate-limit-headers.js';

const consume = (
  limit: WindowLimit,
  state: WindowState | undefined,
  now: number,
  cost: number,
): WindowOutcome =>
  limit.algorithm === 'fixed-window'
    ? fixedWindowConsume(state, now, limit, cost)
    : slidingWindowConsume(state, now, limit, cost);
/** What the guard passes as the header limit of a window: quota as burst, quota per window as rate. */
const headerLimit = (limit: WindowLimit) => ({
  name: 'w',
  rate: (limit.quota * 1000) / limit.windowMs,
  burst: limit.quota,
});

const LIMITS: readonly WindowLimit[] = [
  { algorithm: 'fixed-window', quota: 5, windowMs: 60_000 },
  { algorithm: 'fixed-window', quota: 100, windowMs: 1000 },
  {
    algorithm: 'fixed-window',
    quota: 3,
    windowMs: 86_400_000,
    calendar: { unit: 'day', timeZone: 'Europe/Paris' },
  },
  { algorithm: 'sliding-window', quota: 5, windowMs: 60_000 },
  { algorithm: 'sliding-window', quota: 7, windowMs: 10_000 },
  { algorithm: 'sliding-window', quota: 100, windowMs: 900_000 },
];

describe('headers of window limits', () => {
  it('the policy says q = the quota, w = the window', () => {
    expect(policyHeader([{ ...headerLimit(LIMITS[0]!), name: 'fixed' }])).toBe('"fixed";q=5;w=60');
    expect(policyHeader([{ ...headerLimit(LIMITS[5]!), name: 'sliding' }])).toBe(
      '"sliding";q=100;w=900',
    );
  });

  it.each(
    LIMITS.map(
      (limit) => [`${limit.algorithm} ${limit.quota}/${limit.windowMs} ms`, limit] as const,
    ),
  )(
    '%s: a greedy client that spends r, then waits t, is never denied; Retry-After is never before t',
    (_name, limit) => {
      let random = 11;
      const jitterMs = (): number => ((random = (random * 48_271) % 2_147_483_647) % 997) / 3;
      let state: WindowState | undefined;
      let now = Date.parse('2026-03-27T10:00:00Z'); // the calendar limit crosses the 23-hour day of 2026-03-29
      let waited = 0;
      for (let request = 0; request < 400; request++) {
        const { state: next, decision } = consume(limit, state, now, 1);
        expect({ request, allowed: decision.allowed }).toEqual({ request, allowed: true });
        state = next;
        const t = effectiveWindowSeconds(decision, headerLimit(limit));
        expect(t).toBeGreaterThanOrEqual(1);
        if (decision.remaining === 0) {
          // One more now is denied, and its Retry-After is not before t.
          const denied = consume(limit, state, now, 1).decision;
          expect(denied.allowed).toBe(false);
          expect(retryAfterSeconds([denied])).toBeGreaterThanOrEqual(
            effectiveWindowSeconds(denied, headerLimit(limit)),
          );
          now += t * 1000 + jitterMs();
          waited++;
        } else if (request % 50 === 0) {
          now += jitterMs();
        }
      }
      expect(waited).toBeGreaterThan(0);
    },
  );
});
