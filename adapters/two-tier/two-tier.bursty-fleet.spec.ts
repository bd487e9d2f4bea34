/**
 * A fleet whose traffic comes in bursts (issue 29, `pace.ts`, `pace-book.ts`):
 * two instances pace a hot key, their demand pauses for most of each second
 * and comes back all at once. No window admits over one bucket's `burst +
 * rate × window`: Redis keeps the bucket below full by what the paces may
 * still bring and their holders may have saved (docs/fleet.md, "The
 * bounds"), and a pace that ended in the pause leaves its share to the
 * bucket, not to both. The
 * shared redis-server, client time; every request's `now` and the stores'
 * clock are one simulated clock, stepped a millisecond at a time.
 */
import type { ConsumeResult } from '../../lib/store/rate-limit-store.interface.js';
import { check } from '../../test/utils/checks.js';
import { twoTierFixture } from '../../test/utils/two-tier-fixture.js';
import { LUMP_LEASE_TTLS } from './pace.js';

const T0 = 1_700_000_000_000;
const RATE = 200;
const BURST = 100;

/** The most any window of `times` (sorted ms) admits over `burst + rate × window`. */
function worstWindowExcess(times: number[]): number {
  let worst = 0;
  for (let i = 0; i < times.length; i++) {
    for (let j = i; j < times.length; j++) {
      const window = times[j]! - times[i]!;
      worst = Math.max(worst, j - i + 1 - (BURST + (RATE * window) / 1000));
    }
  }
  return worst;
}

describe('TwoTierStore: a fleet whose traffic comes in bursts', () => {
  let at = T0;
  const fleet = twoTierFixture('bursty-fleet', {
    clock: { now: () => at },
    instances: 2,
  });

  it('admits no more in any window than one bucket would, pause after pause', async () => {
    const stores = [fleet.store(), fleet.store()];
    const hot = check('hot', RATE, BURST);
    const admitted: number[] = [];
    // Four seconds: in the first quarter of each, every instance asks twice a millisecond
    // (10 times the rate between them); nothing for the rest.
    for (at = T0; at < T0 + 4_000; at++) {
      if ((at - T0) % 1_000 >= 250) continue;
      for (const store of stores) {
        for (let k = 0; k < 2; k++) {
          const result: ConsumeResult = await store.consume({ checks: [hot], now: at });
          if (result.allowed) admitted.push(at);
        }
      }
    }
    const calls = stores.reduce((sum, store) => sum + store.stats().redisCalls, 0);
    // Here one pace, of about 28 tokens/s, lives through each pause: it saves up to its share
    // of the burst while the bucket refills beside it, and Redis keeps the bucket that far (and
    // the pace's part not yet due) below full (fleet_held): a window admits no more than one
    // bucket would. Before that rule, 2 over; before the savings rule (a quarter second of a
    // pace's tokens saved, kept past its end), 33 over.
    expect(worstWindowExcess(admitted)).toBeLessThanOrEqual(0);
    // The paces served most requests without a call, and the fleet spent a burst each second.
    expect(calls).toBeLessThan(admitted.length / 10);
    expect(admitted.length).toBeGreaterThan(3 * (BURST + RATE / 4) * 0.75);
  });

  it("admits no more in any window when a light instance holds the bucket's tokens for long", async () => {
    const [light, other] = [fleet.store(), fleet.store()];
    const hot = check('hot', RATE, BURST);
    const admitted: number[] = [];
    const ask = async (store: typeof light): Promise<void> => {
      const result: ConsumeResult = await store.consume({ checks: [hot], now: at });
      if (result.allowed) admitted.push(at);
    };
    // One instance asks 20 times a second for two seconds, from a full bucket: its pace covers
    // that, and what the bucket gave it at once waits in its lease while the bucket refills.
    for (at = T0; at < T0 + 2_000; at++) if ((at - T0) % 50 === 0) await ask(light);
    // Then both ask as fast as they can for a fifth of a second.
    for (; at < T0 + 2_200; at++)
      for (const store of [light, other, light, other]) await ask(store);
    // What the bucket gave the light instance at once is spent, or given back, within a quarter
    // of the 1 s lease TTL: at most what the bucket refills meanwhile comes on top of a window.
    // Before, it held its lump and renewal extras for as long as it paced: 100 over.
    expect(worstWindowExcess(admitted)).toBeLessThanOrEqual(RATE * LUMP_LEASE_TTLS);
  });
});
