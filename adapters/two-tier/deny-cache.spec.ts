import { gcraConsume } from '../../lib/algorithms/gcra.js';
import { check } from '../../test/utils/checks.js';
import { DenyCache, denyWaitMs } from './deny-cache.js';
import { newKeyState } from './key-state.js';

describe('deny cache', () => {
  describe('denyWaitMs (pure)', () => {
    it('is the time left until the hold ends', () => {
      expect(denyWaitMs(1_000, 1, 1, 100, 400)).toBe(600);
      expect(denyWaitMs(1_000, 1, 1, 100, 1_000)).toBe(0);
    });

    it('adds the extra tokens of a dearer request, one emission interval each', () => {
      expect(denyWaitMs(1_000, 1, 3, 100, 400)).toBe(800);
      expect(denyWaitMs(1_000, 2, 2.5, 100, 400)).toBe(650);
    });
  });

  describe('DenyCache', () => {
    const c = check('k', 10, 5); // 100 ms per token
    const held = (now = 0) => {
      const denials = new DenyCache();
      const state = newKeyState(c.limit, now);
      denials.holdAfterDenial(c, state, now, 500);
      return { denials, state };
    };

    it('holds a denied key until its wait is over, for requests as dear or dearer', () => {
      const { denials, state } = held();
      expect(state).toMatchObject({ denyUntil: 500, denyCost: 1 });
      expect(denials.active(c, state, 0)).toBe(true);
      expect(denials.active(c, state, 499)).toBe(true);
      expect(denials.active(c, state, 500)).toBe(false);
      expect(denials.active({ ...c, cost: 2 }, state, 100)).toBe(true);
    });

    it('lets a cheaper request, or the same key under another limit, be asked of Redis', () => {
      const { denials, state } = held();
      expect(denials.active({ ...c, cost: 0.5 }, state, 100)).toBe(false);
      expect(denials.active(check('k', 20, 5), state, 100)).toBe(false);
      expect(denials.active(check('k', 10, 6), state, 100)).toBe(false);
    });

    it('reports a held request as denied: the bucket as last seen, and the wait left (a dearer request its extra tokens too)', () => {
      const { denials, state } = held();
      state.shadowTat = gcraConsume(undefined, 0, c.limit, 5).tat; // emptied at 0, one token back by 100
      expect(denials.decision(c, state, 100)).toEqual({
        allowed: false,
        remaining: 1,
        retryAfterMs: 400,
        resetMs: 400,
        reason: 'limit',
      });
      expect(denials.decision({ ...c, cost: 2 }, state, 100)).toMatchObject({ retryAfterMs: 500 });
      // Never seen by Redis (no view): reported full, still held.
      const fresh = held();
      expect(fresh.denials.decision(c, fresh.state, 0)).toEqual({
        allowed: false,
        remaining: 5,
        retryAfterMs: 500,
        resetMs: 0,
        reason: 'limit',
      });
    });

    it('holds a key after a short lease until the tokens wanted have refilled (none: no hold)', () => {
      const denials = new DenyCache();
      const state = newKeyState(c.limit, 0);
      denials.holdAfterShortLease({ ...c, cost: 2 }, state, 1_000, 3);
      expect(state).toMatchObject({ denyUntil: 1_300, denyCost: 2 });
      denials.holdAfterShortLease(c, state, 1_000, -2);
      expect(state).toMatchObject({ denyUntil: 1_000, denyCost: 1 });
      expect(denials.active(c, state, 1_000)).toBe(false);
    });

    it('forgets a hold when cleared', () => {
      const { denials, state } = held();
      denials.clear(state);
      expect(denials.active(c, state, 0)).toBe(false);
      expect(state.denyUntil).toBe(Number.NEGATIVE_INFINITY);
    });
  });
});
