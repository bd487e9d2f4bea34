import { jest } from '@jest/globals';
import { gcraConsume, gcraPeek } from '../../lib/algorithms/gcra.js';
import { check } from '../../test/utils/checks.js';
import { leaseBooks } from '../../test/utils/lease-book-fixture.js';
import { FLEET_HOLD_SHARE as S } from './fleet-share.js';
import { withoutLease } from './local-decision.js';
import { HOT_LEASE } from './lease-sizing.js';
import { sleep } from '../../test/utils/time.js';

const c = check('k', 100, 100); // 10 ms per token, leases up to 25
const allowedAnswer = (remaining: number, resetMs: number) => ({
  allowed: true,
  remaining,
  retryAfterMs: 0,
  resetMs,
});

describe('LeaseBook', () => {
  const make = leaseBooks();

  describe('observe', () => {
    it('leases nothing to a key seen once or twice, then half a window of its demand, at most maxLeaseShare of the burst', () => {
      const { leases, keys } = make();
      const state = keys.stateOf(c, 0);
      const targets: number[] = [];
      for (let i = 0; i < 12; i++) {
        leases.observe(c, state, i * 10);
        targets.push(state.target);
      }
      // Sized before each request is counted: 0, 1, 2 tokens seen are below the minimum demand.
      expect(targets.slice(0, 3)).toEqual([0, 0, 0]);
      expect(targets[3]).toBeGreaterThan(0);
      expect(Math.max(...targets)).toBe(25);
      // 12 tokens, each decayed by e^(-10 ms / 1000 ms) per step since.
      expect(state.score).toBeCloseTo((1 - Math.exp(-0.12)) / (1 - Math.exp(-0.01)), 9);
    });

    it('lets demand decay with time (leaseTtlMs is its time constant)', () => {
      const { leases, keys } = make();
      const state = keys.stateOf(c, 0);
      for (let i = 0; i < 10; i++) leases.observe(c, state, 0);
      leases.observe(c, state, 5_000);
      expect(state.score).toBeCloseTo(10 * Math.exp(-5) + 1, 9);
      expect(state.target).toBe(0);
      expect(state.seenAt).toBe(5_000);
    });
  });

  describe('spending', () => {
    it('covers a request from a live lease, and gives an expired one back instead', () => {
      const { leases, keys, clock, givenBack } = make();
      const state = keys.stateOf(c, 0);
      expect(leases.covers(c, state, 0)).toBe(false);
      state.leaseMs = 20; // 2 tokens
      state.leaseExpiresAt = 1_000;
      keys.leased.add('k');
      expect(leases.covers({ ...c, cost: 2 }, state, 0)).toBe(true);
      expect(leases.covers({ ...c, cost: 3 }, state, 0)).toBe(false);
      clock.set(1_000);
      expect(leases.covers(c, state, 0)).toBe(false);
      expect(givenBack).toEqual([['k', 100, 100, 2]]);
      expect(keys.leased.size).toBe(0);
    });

    it('spends a lease as the algorithm charges the bucket, and unmarks the key once it is empty', () => {
      const { leases, keys } = make();
      const state = keys.stateOf(c, 0);
      state.leaseMs = 20;
      keys.leased.add('k');
      const first = leases.spend(c, state, 0);
      expect(first).toEqual(gcraConsume(undefined, 0, c.limit, 1));
      expect(state).toMatchObject({ shadowTat: first.tat, leaseMs: 10 });
      expect(keys.leased.has('k')).toBe(true);
      leases.spend(c, state, 0);
      expect(state.leaseMs).toBe(0);
      expect(keys.leased.has('k')).toBe(false);
    });

    it('puts a reservation back exactly, or only its own charge when the view moved meanwhile', () => {
      const { leases, keys } = make();
      const state = keys.stateOf(c, 0);
      state.leaseMs = 30;
      state.leaseExpiresAt = 1_000;
      keys.leased.add('k');
      const reservation = leases.reserve(0, c, state, 0);
      expect(reservation).toMatchObject({
        index: 0,
        key: 'k',
        previous: undefined,
        chargedMs: 10,
        leaseMs: 10,
      });
      leases.unreserve(reservation);
      expect(state).toMatchObject({ shadowTat: undefined, leaseMs: 30 });

      const again = leases.reserve(1, c, state, 0);
      leases.spend(c, state, 0); // another request spent meanwhile
      leases.unreserve(again);
      expect(state).toMatchObject({ shadowTat: 10, leaseMs: 20 });
      expect(keys.leased.has('k')).toBe(true);
    });

    it('puts a reservation back as owed when its lease expired meanwhile: never spent past its life', () => {
      const { leases, keys, clock } = make();
      const state = keys.stateOf(c, 0);
      state.leaseMs = 30;
      state.leaseExpiresAt = 1_000;
      keys.leased.add('k');
      const reservation = leases.reserve(0, c, state, 0);
      clock.advance(1_000);
      leases.unreserve(reservation);
      expect(state).toMatchObject({ leaseMs: 20, owedMs: 10 });
      expect(keys.leased.has('k')).toBe(true);
    });
  });

  describe('settle (what Redis answered a lease call)', () => {
    it("grants the extra tokens for leaseTtlMs, on an unref()'d expiry timer, and reports the answer as it is", () => {
      const setInterval = jest.spyOn(globalThis, 'setInterval');
      try {
        const { leases, keys, clock } = make();
        clock.set(500);
        const state = keys.stateOf(c, 0);
        state.target = 10;
        const answer = allowedAnswer(99, 10);
        expect(leases.settle(c, state, answer, 10, true, 0)).toBe(answer);
        expect(state).toMatchObject({
          shadowTat: 10,
          leaseMs: 100,
          leaseExpiresAt: 1_500,
          denyUntil: Number.NEGATIVE_INFINITY,
        });
        expect(keys.leased.has('k')).toBe(true);
        expect(leases).toMatchObject({ taken: 1, takenTokens: 10 });
        expect(setInterval).toHaveBeenCalledTimes(1);
        expect((setInterval.mock.results[0]!.value as NodeJS.Timeout).hasRef()).toBe(false);
      } finally {
        setInterval.mockRestore();
      }
    });

    it('reports the view without a leftover lease (Redis counts it as taken)', () => {
      const { leases, keys } = make();
      const state = keys.stateOf(c, 0);
      state.leaseMs = 5; // half a token left over
      const decision = leases.settle(c, state, allowedAnswer(98, 20), 0, true, 0);
      expect(state.shadowTat).toBe(15);
      expect(decision).toEqual({ ...gcraPeek(15, 0, c.limit), allowed: true });
    });

    it('holds a hot key whose lease came back short until a whole lease has refilled, contention doubled', () => {
      const { leases, keys, denials } = make();
      const state = keys.stateOf(c, 0);
      state.target = 10;
      leases.settle(c, state, allowedAnswer(3, 970), 3, true, 0);
      expect(state.contention).toBe(2);
      // Wait for (1 + 10) x 2 = 22 tokens, less the 0 left after the extras: 220 ms.
      expect(state).toMatchObject({ denyUntil: 220, denyCost: 1 });
      expect(denials.active(c, state, 219)).toBe(true);
    });

    it('relaxes the contention after a whole lease, and ends the hold', () => {
      const { leases, keys } = make();
      const state = keys.stateOf(c, 0);
      state.target = 10;
      state.contention = 4;
      state.denyUntil = 1_000;
      leases.settle(c, state, allowedAnswer(99, 10), 10, true, 0);
      expect(state).toMatchObject({ contention: 3, denyUntil: Number.NEGATIVE_INFINITY });
    });

    it('holds a denied hot key past its retry time for a whole lease (what retryAfterMs then says); a cold one until its retry time', () => {
      const { leases, keys } = make();
      const denied = {
        allowed: false,
        remaining: 0,
        retryAfterMs: 10,
        resetMs: 1_010,
        reason: 'limit' as const,
      };
      const hot = keys.stateOf(c, 0);
      hot.target = HOT_LEASE;
      // (1 + 4) x 2 = 10 tokens held, the request's own included in the retry time: 9 more x 10 ms.
      expect(leases.settle(c, hot, denied, 0, false, 0)).toEqual({ ...denied, retryAfterMs: 100 });
      expect(hot).toMatchObject({ denyUntil: 100, denyCost: 1, contention: 2 });

      const cold = keys.stateOf(check('cold', 100, 100), 0);
      expect(leases.settle(check('cold', 100, 100), cold, denied, 0, false, 0)).toBe(denied);
      expect(cold).toMatchObject({ denyUntil: 10, contention: 1 });
    });

    describe('with a fleet count (instances Redis counted for the bucket)', () => {
      it('holds a hot key that came back short for a batch per instance, spread by the draw; no contention learned', () => {
        const { leases, keys, denials } = make({ draws: [0.5, 0.1] });
        const state = keys.stateOf(c, 0);
        state.target = 10;
        // 8 instances: (1 + 10) x 8 x S (FLEET_HOLD_SHARE) x (2 x 0.5) = 88 S tokens of 10 ms,
        // none left after the extras.
        leases.settle(c, state, allowedAnswer(3, 970), 3, true, 0, 10, 8);
        expect(state).toMatchObject({ instances: 8, denyCost: 1 });
        expect(state.denyUntil).toBeCloseTo(880 * S, 9);
        expect(denials.active(c, state, 880 * S - 1)).toBe(true);
        expect(denials.active(c, state, 880 * S + 1e-6)).toBe(false);
        // Next time the draw is 0.1: 11 x 8 x S x 0.2 = 17.6 S tokens.
        leases.settle(c, state, allowedAnswer(3, 970), 3, true, 1_000, 10, 8);
        expect(state.denyUntil).toBeCloseTo(1_000 + 176 * S, 9);
      });

      it('holds a whole lease that left the bucket drier than another batch: the next call waits for its share', () => {
        const { leases, keys, denials } = make({ draws: [0.5] });
        const state = keys.stateOf(c, 0);
        state.target = 10;
        // Whole lease of 10, 2 tokens left in Redis: 11 x 4 x S - 2 tokens to wait for.
        leases.settle(c, state, allowedAnswer(12, 880), 10, true, 0, 10, 4);
        expect(state.leaseMs).toBe(100);
        expect(state.denyUntil).toBeCloseTo((44 * S - 2) * 10, 9);
        // The lease still serves meanwhile: holds only apply once it is spent.
        expect(leases.covers(c, state, 0)).toBe(true);
        expect(denials.active(c, state, 100)).toBe(true);
      });

      it('does not hold a whole lease that left a batch or more in the bucket, nor a single instance', () => {
        const { leases, keys } = make();
        const plenty = keys.stateOf(check('plenty', 100, 100), 0);
        plenty.target = 10;
        leases.settle(
          check('plenty', 100, 100),
          plenty,
          allowedAnswer(60, 400),
          10,
          true,
          0,
          10,
          4,
        );
        expect(plenty.denyUntil).toBe(Number.NEGATIVE_INFINITY);
        const alone = keys.stateOf(check('alone', 100, 100), 0);
        alone.target = 10;
        leases.settle(check('alone', 100, 100), alone, allowedAnswer(12, 880), 10, true, 0, 10, 1);
        expect(alone.denyUntil).toBe(Number.NEGATIVE_INFINITY);
      });

      it('holds a denied hot key past its retry time for its share of the fleet', () => {
        const { leases, keys } = make({ draws: [0.5] });
        const denied = {
          allowed: false,
          remaining: 0,
          retryAfterMs: 10,
          resetMs: 1_010,
          reason: 'limit' as const,
        };
        const hot = keys.stateOf(c, 0);
        hot.target = HOT_LEASE;
        // (1 + 4) x 16 x S = 80 S tokens, the request's own in the retry time: 10 + (80 S - 1) x 10 ms.
        expect(leases.settle(c, hot, denied, 0, false, 0, HOT_LEASE, 16)).toEqual({
          ...denied,
          retryAfterMs: 800 * S,
        });
      });

      it('asks 3/4 of a TTL of demand per lease once several instances are counted (half for one)', () => {
        const { leases, keys } = make();
        const one = keys.stateOf(check('one', 100, 100), 0);
        const many = keys.stateOf(check('many', 100, 100), 0);
        many.instances = 4;
        for (let t = 0; t <= 1_000; t += 50) {
          leases.observe(check('one', 100, 100), one, t);
          leases.observe(check('many', 100, 100), many, t);
        }
        expect(many.target / one.target).toBeCloseTo(1.5, 0);
      });

      it('asks Redis to count it, for twice the mean hold, only when a check asks a lease', () => {
        const { leases, keys } = make();
        const state = keys.stateOf(c, 0);
        state.instances = 32;
        const asked = [{ key: 'k', limit: c.limit, cost: 1, maxExtra: 15 }];
        // (1 + 15) x 32 x 10 ms x S, twice.
        expect(leases.fleetWindowMs(asked, [state])).toBeCloseTo(10_240 * S, 9);
        expect(leases.fleetWindowMs([{ ...asked[0]!, maxExtra: 0 }], [state])).toBe(0);
      });
    });

    it('leaves a check that admitted in a request denied as a whole as Redis reported it, holding nothing', () => {
      const { leases, keys } = make();
      const state = keys.stateOf(c, 0);
      const uncharged = allowedAnswer(100, 0);
      expect(leases.settle(c, state, uncharged, 0, false, 0)).toBe(uncharged);
      expect(state.denyUntil).toBe(Number.NEGATIVE_INFINITY);
    });
  });

  it('asks Redis for each cost and the lease target on top, giving back a leftover too small first', () => {
    const { leases, keys, givenBack } = make();
    const a = keys.stateOf(c, 0);
    a.target = 7;
    a.leaseMs = 5;
    keys.leased.add('k');
    const other = check('other', 10, 10, 2);
    const b = keys.stateOf(other, 0);
    const asked = leases.ask([other, c], [1, 0], [a, b]);
    expect(asked).toEqual([
      { key: 'k', limit: c.limit, cost: 1, maxExtra: 7, weight: 0 },
      { key: 'other', limit: other.limit, cost: 2, maxExtra: 0, weight: 0 },
    ]);
    // The weight the fleet sums: demand per second over the rate. The score spans one
    // leaseTtlMs for a key tracked that long; a young key's, its requests after the first over
    // its age (`demandPerSecond`).
    b.score = 4;
    b.seenAt = 100_000;
    expect(leases.ask([other], [0], [b])[0]!.weight).toBeCloseTo((4 * 1000) / 1_000 / 10);
    b.firstSeen = b.seenAt - 100;
    expect(leases.ask([other], [0], [b])[0]!.weight).toBeCloseTo(
      ((4 - Math.exp(-0.1)) * 1000) / (1_000 * (1 - Math.exp(-0.1))) / 10,
    );
    expect(givenBack).toEqual([['k', 100, 100, 0.5]]);
  });

  it("reports a bucket Redis peeked without this instance's lease, and no fuller than its own view", () => {
    const { keys } = make();
    const redisView = gcraPeek(300, 0, c.limit); // Redis: 30 tokens taken, 20 of them leased here
    expect(withoutLease(redisView, keys.get('unknown'), c.limit, 0)).toBe(redisView);
    const state = keys.stateOf(c, 0);
    state.leaseMs = 200;
    expect(withoutLease(redisView, keys.get('k'), c.limit, 0)).toEqual(gcraPeek(100, 0, c.limit));
    state.shadowTat = 150; // spent locally since: its own view is emptier
    expect(withoutLease(redisView, keys.get('k'), c.limit, 0)).toEqual(gcraPeek(150, 0, c.limit));
  });

  it('gives back, on its timer, the leases no request touched since they expired, then stops the timer', async () => {
    const { leases, keys, clock, givenBack, flushes } = make({ leaseTtlMs: 20 });
    const state = keys.stateOf(c, 0);
    leases.settle(c, state, allowedAnswer(99, 10), 5, true, 0);
    await sleep(40);
    expect(givenBack).toEqual([]); // not expired on the store clock
    clock.advance(20);
    const deadline = Date.now() + 2_000;
    while (givenBack.length === 0 && Date.now() < deadline) await sleep(5);
    expect(givenBack).toEqual([['k', 100, 100, 5]]);
    expect(flushes.count).toBeGreaterThan(0);
    expect(keys.leased.size).toBe(0);
  });

  it('gives every lease back at close, and starts no timer after', () => {
    const { leases, keys, givenBack } = make();
    const state = keys.stateOf(c, 0);
    leases.settle(c, state, allowedAnswer(99, 10), 5, true, 0);
    leases.close();
    expect(givenBack).toEqual([['k', 100, 100, 5]]);
    const setInterval = jest.spyOn(globalThis, 'setInterval');
    try {
      leases.settle(c, state, allowedAnswer(94, 60), 5, true, 0);
      expect(setInterval).not.toHaveBeenCalled();
    } finally {
      setInterval.mockRestore();
    }
  });
});
