/**
 * The paces of a LeaseBook (instances sharing the buckets: `pace.ts`,
 * `pace-book.ts`): asked, spent as they come due, saved up to the pace's
 * share of the burst, shrinking once it ends, renewed. On a real key table
 * and deny cache, a ManualClock; Redis' answers are applied as the store
 * would.
 */
import { check } from '../../test/utils/checks.js';
import { leaseBooks } from '../../test/utils/lease-book-fixture.js';
import {
  MIN_PACE_LEASE_TTLS,
  PACE_TOKENS,
  YOUNG_LUMP_LEASE_TTLS,
  YOUNG_PACE_LEASE_TTLS,
} from './pace.js';

/** The fixture's lease TTL (`leaseBooks`' default). */
const LEASE_TTL_MS = 1_000;

const c = check('k', 100, 100); // 10 ms per token

describe('LeaseBook', () => {
  const make = leaseBooks();

  describe('paces (instances sharing the buckets)', () => {
    it('asks a pace for a hot key, with its demand, and none when the store is alone', () => {
      for (const instances of [1, 2]) {
        const { leases, keys } = make({ instances });
        const state = keys.stateOf(c, 0);
        Object.assign(state, { target: 7, score: 10, seenAt: 100_000 });
        const [asked] = leases.ask([c], [0], [state], 100_000);
        if (instances === 1) expect(asked!.pace).toBeUndefined();
        else
          expect(asked!.pace).toMatchObject({
            ask: expect.closeTo(10, 5),
            tokens: PACE_TOKENS,
            instances,
          });
      }
    });

    it('asks a young key pace again soon while its share is unsure, an older one within a lease TTL', () => {
      const { leases, keys } = make({ instances: 2 });
      const leaseTtlMs = 1_000;
      const paceOf = (firstSeen: number) => {
        const state = keys.stateOf({ ...c, key: `k${firstSeen}` }, firstSeen);
        Object.assign(state, { target: 7, score: 10, seenAt: 100_000 });
        const [asked] = leases.ask([{ ...c, key: `k${firstSeen}` }], [0], [state], 100_000);
        return asked!.pace!;
      };
      // Its demand measured over 50 ms (two requests that came together read as a rate).
      const young = YOUNG_PACE_LEASE_TTLS * leaseTtlMs;
      expect(paceOf(99_950)).toMatchObject({ minMs: young, sureMs: young });
      expect(paceOf(0)).toMatchObject({
        minMs: MIN_PACE_LEASE_TTLS * leaseTtlMs,
        sureMs: leaseTtlMs,
      });
    });

    it('spends its tokens as they come due, and holds the key without a call until they cover a request', () => {
      const { leases, keys } = make({ instances: 2 });
      const state = keys.stateOf(c, 0);
      leases.paces.apply(c, state, 50, 4_000, 0, 3); // 1 token every 20 ms, from 0 (client time)
      expect(leases.covers(c, state, 10)).toBe(false);
      expect(leases.paces.hold(c, state, 10)).toBe(true);
      expect(state.denyUntil).toBeCloseTo(20); // the half token missing
      expect(leases.covers(c, state, 20)).toBe(true);
      leases.spend(c, state, 20);
      expect(leases.covers(c, state, 39)).toBe(false);
      expect(leases.covers({ ...c, cost: 2 }, state, 60)).toBe(true);
      // Unspent, they wait up to the pace's share of the burst (half the rate: 50 tokens); the
      // rest are dropped.
      expect(leases.covers({ ...c, cost: 50 }, state, 3_000)).toBe(true);
      expect(leases.covers({ ...c, cost: 51 }, state, 3_000)).toBe(false);
    });

    it('spends the tokens taken at once before the savings, and owes back what is left of them a quarter lease TTL on', () => {
      const { leases, keys, givenBack } = make({ instances: 2 });
      const state = keys.stateOf(c, 0);
      state.firstSeen = -LEASE_TTL_MS; // a key seen for a lease TTL: its demand read over it
      leases.paces.apply(c, state, 50, 4_000, 0, 3, 30); // 1 token every 20 ms, and 30 at once
      leases.spend({ ...c, cost: 10 }, state, 0); // of the 30: 20 left
      // 200 ms on: 10 came due and wait, beside the 20.
      expect(leases.covers({ ...c, cost: 30 }, state, 200)).toBe(true);
      // At 250 ms the 20 lapse, owed back; the 12.5 due stay.
      expect(leases.covers({ ...c, cost: 13 }, state, 250)).toBe(false);
      expect(leases.covers({ ...c, cost: 12 }, state, 250)).toBe(true);
      // They go with the next pace asked (no call of their own), or with the lease at close.
      expect(leases.paces.renewal(c, state, 300).pace).toMatchObject({
        giveBack: expect.closeTo(20),
      });
      expect(state.owedMs).toBe(0);
      const closing = make({ instances: 2 });
      const other = closing.keys.stateOf(c, 0);
      closing.leases.paces.apply(c, other, 50, 4_000, 0, 3, 30);
      closing.leases.covers(c, other, 250);
      closing.keys.releaseAll();
      expect(closing.givenBack).toEqual([['k', 100, 100, expect.closeTo(30 + 12.5)]]);
      expect(givenBack).toEqual([]);
    });

    it("keeps a young key's tokens taken at once half a lease TTL: its demand, read over a few requests, may be read high", () => {
      const { leases, keys } = make({ instances: 2 });
      const state = keys.stateOf(c, 0); // first seen now
      leases.paces.apply(c, state, 50, 4_000, 0, 3, 30);
      leases.spend({ ...c, cost: 10 }, state, 0);
      // At 250 ms the 20 left and the 12.5 due are still there; half a lease TTL on, the 20 lapse.
      const lapse = YOUNG_LUMP_LEASE_TTLS * LEASE_TTL_MS;
      expect(leases.covers({ ...c, cost: 32 }, state, 250)).toBe(true);
      expect(leases.covers({ ...c, cost: 26 }, state, lapse)).toBe(false);
      expect(leases.covers({ ...c, cost: 25 }, state, lapse)).toBe(true);
    });

    it('gives a live pace back at close though every token that came due was spent', () => {
      const { leases, keys } = make({ instances: 2 });
      const released: string[] = [];
      keys.releasePace = (key) => released.push(key);
      const state = keys.stateOf(c, 0);
      leases.paces.apply(c, state, 50, 4_000, 0, 3); // 1 token every 20 ms, until 4 s
      expect(leases.covers(c, state, 20)).toBe(true);
      leases.spend(c, state, 20); // nothing held now; the pace goes on, its part not yet due
      keys.releaseAll();
      expect(released).toEqual(['k']);
    });

    it('gives back what is left of the tokens taken at once with the next pace it asks', () => {
      const { leases, keys } = make({ instances: 2 });
      const state = keys.stateOf(c, 0);
      leases.paces.apply(c, state, 50, 1_000, 0, 3, 30);
      const renewal = leases.paces.renewal(c, state, 100); // 5 came due, saved
      expect(renewal.pace).toMatchObject({
        giveBack: expect.closeTo(30),
        saved: expect.closeTo(5),
      });
      expect(state.lumpMs).toBe(0);
      expect(leases.covers({ ...c, cost: 5 }, state, 100)).toBe(true);
      expect(leases.covers({ ...c, cost: 6 }, state, 100)).toBe(false);
    });

    it('saves no more than Redis lent with the pace (the room it keeps below full for them)', () => {
      const { leases, keys } = make({ instances: 2 });
      const state = keys.stateOf(c, 0);
      leases.paces.apply(c, state, 50, 4_000, 0, 3, 0, 10); // 10 tokens lent, of a cap of 50
      expect(leases.covers({ ...c, cost: 10 }, state, 3_000)).toBe(true);
      expect(leases.covers({ ...c, cost: 11 }, state, 3_000)).toBe(false);
    });

    it("shrinks an ended pace's savings as the bucket regains its share of the refill", () => {
      const { leases, keys } = make({ instances: 2 });
      const state = keys.stateOf(c, 0);
      leases.paces.apply(c, state, 50, 4_000, 0, 3);
      expect(leases.covers({ ...c, cost: 50 }, state, 3_900)).toBe(true); // 50 saved
      // Ended at 4,000 unrenewed: 500 ms later the bucket has regained 25 of them, 25 are left.
      expect(leases.covers({ ...c, cost: 25 }, state, 4_500)).toBe(true);
      expect(leases.covers({ ...c, cost: 26 }, state, 4_500)).toBe(false);
      expect(leases.paces.hold(c, state, 4_500)).toBe(false);
      // And on, with no request in between: a second after the end, none.
      expect(leases.covers(c, state, 5_000)).toBe(false);
      expect(state.paceSavedMs).toBe(0);
      expect(state.endedPaceRate).toBe(0);
    });

    /** A pace of 50 tokens over a second, all saved by its end, 40 of them spent then: 10 left. */
    const tenSavedAtEnd = () => {
      const { leases, keys } = make({ instances: 2 });
      const state = keys.stateOf(c, 0);
      leases.paces.apply(c, state, 50, 1_000, 0, 3);
      expect(leases.covers({ ...c, cost: 40 }, state, 1_000)).toBe(true);
      leases.spend({ ...c, cost: 40 }, state, 1_000);
      return { leases, state };
    };

    it("shrinks what is left of the savings at the pace's rate, from its end", () => {
      const { leases, state } = tenSavedAtEnd();
      // 100 ms after the end the bucket has regained 5 tokens: 5 left, then none.
      expect(leases.covers({ ...c, cost: 5 }, state, 1_100)).toBe(true);
      expect(leases.covers({ ...c, cost: 6 }, state, 1_100)).toBe(false);
      expect(leases.covers(c, state, 1_200)).toBe(false);
      expect(state.endedPaceRate).toBe(0);
    });

    it('neither shrinks nor grows the savings for a request stamped before the last one', () => {
      const { leases, state } = tenSavedAtEnd();
      expect(leases.covers({ ...c, cost: 5 }, state, 1_100)).toBe(true); // 5 left
      // Earlier clocks (client time): still 5, not 10 nor more.
      expect(leases.covers({ ...c, cost: 6 }, state, 1_050)).toBe(false);
      expect(leases.covers({ ...c, cost: 6 }, state, 900)).toBe(false);
      expect(leases.covers({ ...c, cost: 5 }, state, 1_050)).toBe(true);
    });

    /** A hot key holding a pace of 100 tokens/s for 1 s from 0. */
    const pacedFor1s = () => {
      const { leases, keys } = make({ instances: 2 });
      const state = keys.stateOf(c, 0);
      Object.assign(state, { target: 7, score: 10 });
      leases.paces.apply(c, state, 100, 1_000, 0, 0);
      return { leases, state };
    };

    it('renews in the last tenth, and a new ask stops the pace held (what came due stays) and tells it', () => {
      const { leases, state } = pacedFor1s();
      expect(leases.paces.renewalDue(state, 899)).toBe(false);
      expect(leases.paces.renewalDue(state, 900)).toBe(true);
      const renewal = leases.paces.renewal(c, state, 900);
      expect(renewal).toMatchObject({ cost: 0, pace: { held: 100, heldMs: 1_000 } });
      expect(state.paceRate).toBe(0);
      expect(state.leaseMs).toBeCloseTo(900); // 90 tokens due, all kept (under the pace's share of the burst, 100)
    });

    it('ends the pace at a renewal answered with none: its savings shrink from there, as Redis counts them', () => {
      const { leases, state } = pacedFor1s();
      leases.paces.renewal(c, state, 900); // 90 tokens saved
      leases.paces.apply(c, state, 0, 0, 900, 0);
      // 100 ms later the bucket has regained 10 of them.
      expect(leases.covers({ ...c, cost: 80 }, state, 1_000)).toBe(true);
      expect(leases.covers({ ...c, cost: 81 }, state, 1_000)).toBe(false);
    });

    it("keeps of the savings carried into a new pace no more than the new pace's cap", () => {
      const { leases, state } = pacedFor1s();
      leases.paces.renewal(c, state, 900); // 90 tokens saved
      leases.paces.apply(c, state, 20, 1_000, 900, 0); // its share of the burst: 20 tokens
      expect(leases.covers({ ...c, cost: 20 }, state, 900)).toBe(true);
      expect(leases.covers({ ...c, cost: 21 }, state, 900)).toBe(false);
    });

    it('tells the pace it held just past its end, and none once its fleet set may have expired', () => {
      const just = pacedFor1s();
      expect(just.leases.paces.renewal(c, just.state, 1_001).pace).toMatchObject({ held: 100 });
      // The first request after a pause of over half the pace past its end: nothing told.
      const paused = pacedFor1s();
      expect(paused.leases.paces.renewalDue(paused.state, 1_500)).toBe(true);
      const renewal = paused.leases.paces.renewal(c, paused.state, 1_500);
      expect(renewal.pace).toBeDefined();
      expect(renewal.pace!.held).toBeUndefined();
      expect(paused.state.paceRate).toBe(0);
    });
  });
});
