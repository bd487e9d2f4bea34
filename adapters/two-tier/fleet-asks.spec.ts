import { fleetSize, rememberFleet } from './fleet-asks.js';
import { newKeyState } from './key-state.js';
import { tokenBucket } from '../../test/utils/checks.js';

describe('rememberFleet', () => {
  const limit = tokenBucket(100, 100);

  /** The instances' worth of demand a key paces by after a fleet call answered `load`, `instances`. */
  const pacedBy = (load: number, weight: number, instances: number): number => {
    const state = newKeyState(limit, 0);
    rememberFleet(state, 0, '~1', load, weight, instances);
    return fleetSize(state);
  };

  it("takes the fleet's load over this instance's weight when several instances lease the bucket", () => {
    expect(pacedBy(7.5, 5, 2)).toBe(1.5);
  });

  it('paces a lone instance as one, whatever the weight encoding lost', () => {
    // 5x the rate, decoded from a score's fraction near 1.7e12 ms: up to 5.0044 for 5.
    expect(pacedBy(5.0044, 5, 1)).toBe(1);
  });

  it('never reads a load under one instance', () => {
    expect(pacedBy(4.99, 5, 3)).toBe(1);
  });

  it('keeps the epoch it was told, with the time it heard it', () => {
    const state = newKeyState(limit, 0);
    rememberFleet(state, 42, '~7');
    expect(state).toMatchObject({ epoch: '~7', epochAt: 42, fleetLoad: 0 });
  });
});
