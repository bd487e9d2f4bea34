import {
  cameShort,
  CONTENTION_DECAY,
  contended,
  holdTokens,
  HOT_LEASE,
  isHot,
  leaseTarget,
  MAX_CONTENTION,
  relaxed,
} from './lease-sizing.js';

describe('lease sizing (pure)', () => {
  describe('leaseTarget', () => {
    const window = 1_000;
    /** Sized with a cap far above the demand. */
    const target = (demand: number, ageMs: number) => leaseTarget(demand, ageMs, window, 1, 1e9);

    it('gives nothing to a key seen once or twice (less than 2 tokens of decayed demand)', () => {
      expect(target(0, 0)).toBe(0);
      expect(target(1, 0)).toBe(0);
      expect(target(1.99, window)).toBe(0);
    });

    it('asks for half a window of demand, measured over the window once the key is that old', () => {
      expect(target(40, window)).toBe(20);
      expect(target(40, 10 * window)).toBe(20);
      expect(target(41, window)).toBe(20); // whole tokens, rounded down
    });

    it('measures a young key over its age (hot now, not in a second), never over less than a tenth of the window', () => {
      // 10 tokens in 250 ms: 40 per window, so a lease of 20.
      expect(target(10, 250)).toBe(20);
      // 10 tokens at once: counted over 100 ms (a tenth of the window), 100 per window.
      expect(target(10, 0)).toBe(50);
      expect(target(10, 50)).toBe(50);
    });

    it('never exceeds floor(maxLeaseShare x burst), tolerant to float noise, and a share of 0 disables leases', () => {
      expect(leaseTarget(1_000, window, window, 0.25, 100)).toBe(25);
      expect(leaseTarget(1_000, window, window, 0.25, 10)).toBe(2);
      expect(leaseTarget(1_000, window, window, 0, 1_000)).toBe(0);
      // 0.29 x 100 is 28.999999999999996 in doubles: 29 whole tokens all the same.
      expect(leaseTarget(1_000, window, window, 0.29, 100)).toBe(29);
      // The tolerance is a billionth of a token, not more.
      expect(leaseTarget(1_000, window, window, 0.2999, 10)).toBe(2);
    });
  });

  describe('hot keys', () => {
    it(`are hot from a target of ${HOT_LEASE} tokens`, () => {
      expect(isHot(HOT_LEASE - 1)).toBe(false);
      expect(isHot(HOT_LEASE)).toBe(true);
    });

    it('came short when Redis granted fewer extra tokens than wanted (at most what the burst leaves after the cost)', () => {
      expect(cameShort(10, 9, 1, 100)).toBe(true);
      expect(cameShort(10, 10, 1, 100)).toBe(false);
      // Wanted is capped by burst - cost: 4 extra of a burst of 5 at cost 1 is whole.
      expect(cameShort(10, 4, 1, 5)).toBe(false);
      expect(cameShort(10, 3, 1, 5)).toBe(true);
      // A key that is not hot never comes short: waiting would save nothing.
      expect(cameShort(HOT_LEASE - 1, 0, 1, 100)).toBe(false);
    });

    it('hold the request and a whole lease, times the contention', () => {
      expect(holdTokens(10, 1, 1, 100)).toBe(11);
      expect(holdTokens(10, 2, 1, 100)).toBe(22);
      expect(holdTokens(10, 4, 2, 100)).toBe(48);
    });

    it('never hold more than half the burst once contended, unless the request and its lease alone are more', () => {
      expect(holdTokens(10, 16, 1, 100)).toBe(50);
      // The request and a whole lease (1 + 25) are more than half the burst (15): held for that batch, not more.
      expect(holdTokens(25, 16, 1, 30)).toBe(26);
      expect(holdTokens(40, 1, 1, 30)).toBe(30);
    });

    it('double the contention after a shortfall, up to a bound, and decay it after a whole lease, down to 1', () => {
      expect(contended(1)).toBe(2);
      expect(contended(MAX_CONTENTION)).toBe(MAX_CONTENTION);
      expect(contended(MAX_CONTENTION * 0.75)).toBe(MAX_CONTENTION);
      expect(relaxed(4)).toBe(4 * CONTENTION_DECAY);
      expect(relaxed(1.2)).toBe(1);
      expect(relaxed(1)).toBe(1);
    });
  });
});
