import { emissionIntervalMs } from '../../lib/algorithms/gcra.js';
import {
  callsPerAdmitted,
  FLEET_HOLD_SHARE,
  fleetHoldTokens,
  fleetWindowMs,
  MAX_FLEET_WINDOW_MS,
} from './fleet-share.js';

describe('fleet share (pure)', () => {
  describe('fleetHoldTokens', () => {
    it('waits for one batch (cost + lease) when a single instance takes part, whatever the draw', () => {
      expect(fleetHoldTokens(15, 1, 1, 100, 0)).toBe(16);
      expect(fleetHoldTokens(15, 1, 1, 100, 0.99)).toBe(16);
      expect(fleetHoldTokens(15, 0, 1, 100, 0.5)).toBe(16); // not counted yet: as one
    });

    it('waits for a share of a batch per instance on average: the draw spreads it over [0, 2) x the mean', () => {
      expect(FLEET_HOLD_SHARE).toBeGreaterThan(0);
      expect(FLEET_HOLD_SHARE).toBeLessThan(1);
      expect(fleetHoldTokens(15, 32, 1, 100, 0.5)).toBeCloseTo(16 * 32 * FLEET_HOLD_SHARE, 9);
      expect(fleetHoldTokens(15, 32, 1, 100, 0)).toBe(0);
      expect(fleetHoldTokens(15, 32, 1, 100, 0.25)).toBeCloseTo(
        16 * 32 * FLEET_HOLD_SHARE * 0.5,
        9,
      );
      // The mean over uniform draws is the share of a batch times the instances.
      const draws = Array.from({ length: 1000 }, (_, i) => (i + 0.5) / 1000);
      const mean = draws.reduce((sum, u) => sum + fleetHoldTokens(15, 8, 1, 100, u), 0) / 1000;
      expect(mean).toBeCloseTo(16 * 8 * FLEET_HOLD_SHARE, 6);
    });

    it('never counts a lease beyond what the burst holds after the cost', () => {
      expect(fleetHoldTokens(500, 4, 1, 100, 0.5)).toBe(100 * 4 * FLEET_HOLD_SHARE);
    });

    it('treats a draw out of [0, 1) as the nearest one inside (a faulty random source)', () => {
      expect(fleetHoldTokens(15, 2, 1, 100, 7)).toBeLessThan(16 * 2 * 2 * FLEET_HOLD_SHARE);
      expect(fleetHoldTokens(15, 2, 1, 100, -1)).toBe(0);
      expect(fleetHoldTokens(15, 2, 1, 100, Number.NaN)).toBeCloseTo(16 * 2 * FLEET_HOLD_SHARE, 9);
    });
  });

  describe('the fleet-wide call rate it implies', () => {
    it('adds up to rate / (share x batch) calls a second, whatever the number of instances', () => {
      const rate = 200;
      const interval = emissionIntervalMs({ rate, burst: 100 });
      for (const n of [2, 4, 8, 16, 32]) {
        const meanHoldMs = fleetHoldTokens(15, n, 1, 100, 0.5) * interval;
        const fleetCallsPerSecond = (n * 1000) / meanHoldMs;
        expect(fleetCallsPerSecond).toBeCloseTo(rate / (16 * FLEET_HOLD_SHARE), 9);
        // One call per share of a batch, for a lease of 15, at every n.
        expect(fleetCallsPerSecond / rate).toBeCloseTo(callsPerAdmitted(15, 1), 9);
      }
    });
  });

  describe('fleetWindowMs', () => {
    it('is twice the mean hold, so that instances waiting out a hold are still counted', () => {
      // batch 16, 32 instances, 5 ms a token: a mean hold of 2.56 s x FLEET_HOLD_SHARE.
      expect(fleetWindowMs(15, 32, 1, 5, 1000)).toBeCloseTo(2 * 16 * 32 * 5 * FLEET_HOLD_SHARE, 9);
    });

    it('is at least two lease TTLs and at most MAX_FLEET_WINDOW_MS', () => {
      expect(fleetWindowMs(3, 1, 1, 5, 1000)).toBe(2000);
      expect(fleetWindowMs(25, 1000, 1, 1000, 1000)).toBe(MAX_FLEET_WINDOW_MS);
    });
  });
});
