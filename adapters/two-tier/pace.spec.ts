import {
  demandPerSecond,
  dueTokens,
  heldPace,
  MIN_DEMAND_AGE_MS,
  PACE_RENEW_SHARE,
  renewalDue,
  savingsAfterShrinkMs,
  savingsCapMs,
  savingsCreditMs,
  waitForTokens,
} from './pace.js';
import { newKeyState } from './key-state.js';
import { tokenBucket } from '../../test/utils/checks.js';

describe('paces (pure)', () => {
  it('brings its tokens at its rate between its start and its end, none before or after', () => {
    expect(dueTokens(10, 100, 1_100, 50)).toBe(0);
    expect(dueTokens(10, 100, 1_100, 600)).toBe(5);
    expect(dueTokens(10, 100, 1_100, 5_000)).toBe(10);
  });

  it('is renewed in the last tenth of its length', () => {
    const until = 2_000;
    const length = 1_000;
    expect(renewalDue(until, length, until - (PACE_RENEW_SHARE * length + 1))).toBe(false);
    expect(renewalDue(until, length, until - PACE_RENEW_SHARE * length)).toBe(true);
  });

  it('tells how long until the tokens missing come due', () => {
    expect(waitForTokens(20, 1)).toBe(50);
    expect(waitForTokens(20, -1)).toBe(0);
    expect(waitForTokens(0, 1)).toBe(Number.POSITIVE_INFINITY);
  });

  it("reads a key's demand over its age while young, over a lease TTL once older", () => {
    // 10 tokens a second for a long time add up to 10 x leaseTtlMs / 1000 (the score decays).
    expect(demandPerSecond(10, 1_000_000, 1_000)).toBeCloseTo(10);
    // A first request, then 4 more over 100 ms (the first one's part decayed): 40 a second.
    const score = Math.exp(-0.1) + 4;
    expect(demandPerSecond(score, 100, 1_000)).toBeCloseTo(4_000 / (1_000 * (1 - Math.exp(-0.1))));
    expect(demandPerSecond(score, 100, 1_000)).toBeCloseTo(42, 0);
    // Two requests a millisecond apart are not 1,000 a second.
    expect(demandPerSecond(2, 1, 1_000)).toBe(demandPerSecond(2, MIN_DEMAND_AGE_MS, 1_000));
  });

  it('tells Redis the pace it held, for a lost state (none: 0)', () => {
    const state = newKeyState(tokenBucket(10, 10), 0);
    expect(heldPace(state)).toEqual({ held: 0, heldMs: 0 });
    Object.assign(state, { paceRate: 4, paceFrom: 100, paceUntil: 2_600 });
    expect(heldPace(state)).toEqual({ held: 4, heldMs: 2_500 });
  });
  // rate 100/s, burst 50: a token is 10 ms of the bucket.
  const limit = { rate: 100, burst: 50 };

  it("saves up to the pace's share of the burst, and at least the request's cost", () => {
    expect(savingsCapMs(20, 1, limit, 1_000)).toBe(100); // 20/100 of 50 tokens
    expect(savingsCapMs(1, 1, limit, 1_000)).toBe(10); // half a token's share: one token
    expect(savingsCapMs(1, 3, limit, 1_000)).toBe(30);
  });

  it('saves no more than the pace brings in a lease TTL (Redis counts an ended pace one fleet window)', () => {
    expect(savingsCapMs(20, 1, limit, 200)).toBe(40); // 20/s for 0.2 s: 4 tokens, not 10
  });

  it('credits what newly came due up to the cap, and nothing when the clock went back', () => {
    expect(savingsCreditMs(3, 10, 0, 100)).toBe(30);
    expect(savingsCreditMs(3, 10, 90, 100)).toBe(10);
    expect(savingsCreditMs(3, 10, 120, 100)).toBe(0);
    expect(savingsCreditMs(-2, 10, 0, 100)).toBe(0);
  });

  it("shrinks an ended pace's savings a token for each the bucket regains, down to none", () => {
    expect(savingsAfterShrinkMs(100, 20, 250, 10)).toBe(50); // 5 tokens regained in 250 ms
    expect(savingsAfterShrinkMs(100, 20, 1_000, 10)).toBe(0);
    expect(savingsAfterShrinkMs(100, 20, 0, 10)).toBe(100);
  });
});
