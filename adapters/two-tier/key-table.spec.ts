import { ManualClock } from '../../lib/clock.js';
import { check } from '../../test/utils/checks.js';
import type { GiveBackQueue } from './give-back-queue.js';
import { KeyTable } from './key-table.js';
import { hashOf, MAX_SIGHTING_SLOTS, Sightings } from './sightings.js';

/** What the table hands to the give-back queue: [key, rate, burst, tokens]. */
type GivenBack = [string, number, number, number];

function table(maxKeys: number, idleMs = 1_000, owedForMs = 0) {
  const givenBack: GivenBack[] = [];
  const giveBacks = {
    add: (...args: GivenBack) => givenBack.push(args),
  } as unknown as GiveBackQueue;
  const clock = new ManualClock(0);
  return { keys: new KeyTable(maxKeys, idleMs, clock, giveBacks, owedForMs), givenBack, clock };
}

describe('KeyTable', () => {
  it('creates a key state once, fresh (no demand, no view, no lease, no hold), and answers the same one after', () => {
    const { keys } = table(10);
    const state = keys.stateOf(check('a', 10, 20), 5);
    expect(state).toEqual({
      rate: 10,
      burst: 20,
      score: 0,
      seenAt: 5,
      firstSeen: 5,
      target: 0,
      shadowTat: undefined,
      leaseMs: 0,
      leaseExpiresAt: 0,
      denyUntil: Number.NEGATIVE_INFINITY,
      denyCost: 0,
      contention: 1,
      instances: 0,
      epoch: '',
      epochAt: 0,
      fleetLoad: 0,
      paceRate: 0,
      paceFrom: 0,
      paceUntil: 0,
      paceDue: 0,
      paceSavedMs: 0,
      paceLentMs: Number.POSITIVE_INFINITY,
      lumpMs: 0,
      lumpUntil: 0,
      owedMs: 0,
      endedPaceRate: 0,
      savingsShrunkAt: 0,
      pending: undefined,
      pendingDeadline: 0,
    });
    expect(keys.stateOf(check('a', 10, 20), 9)).toBe(state);
    expect(keys.size).toBe(1);
  });

  it('holds at most maxKeys, dropping the least recently used key (touch makes a key recent)', () => {
    const { keys } = table(3);
    const [a, b] = ['a', 'b', 'c'].map((key) => keys.stateOf(check(key, 1, 1), 0));
    keys.touch('a', a!);
    keys.stateOf(check('d', 1, 1), 0);
    expect([...keys.entries.keys()]).toEqual(['c', 'a', 'd']); // b was the oldest
    keys.stateOf(check('e', 1, 1), 0);
    expect([...keys.entries.keys()]).toEqual(['a', 'd', 'e']);
    expect(keys.get('b')).toBeUndefined();
    expect(b).toBeDefined();
  });

  it('leaves a key answered by the request that created it where it is; moves an older one (answered)', () => {
    const { keys } = table(10);
    const [a, b] = ['a', 'b', 'c'].map((key) => keys.stateOf(check(key, 1, 1), 0));
    expect(keys.answered('a', a!, 0)).toBe(a);
    expect([...keys.entries.keys()]).toEqual(['a', 'b', 'c']);
    // First seen at 0, answered for a request at 5: made recent.
    expect(keys.answered('b', b!, 5)).toBe(b);
    expect([...keys.entries.keys()]).toEqual(['a', 'c', 'b']);
    // Dropped meanwhile: put back, as touch does.
    keys.forget('a');
    expect(keys.answered('a', a!, 0)).toBe(a);
    expect([...keys.entries.keys()]).toEqual(['c', 'b', 'a']);
  });

  it('gives the lease of a key it drops back (tokens = lease time x rate), and forgets the key held one', () => {
    const { keys, givenBack } = table(1);
    const state = keys.stateOf(check('a', 10, 20), 0);
    state.leaseMs = 500;
    keys.leased.add('a');
    keys.stateOf(check('b', 1, 1), 0);
    expect(givenBack).toEqual([['a', 10, 20, 5]]);
    expect(state.leaseMs).toBe(0);
    expect(keys.leased.size).toBe(0);
  });

  it('puts back a state that was dropped while its Redis call was in flight, unless another took its key meanwhile', () => {
    const { keys } = table(1);
    const first = keys.stateOf(check('a', 1, 1), 0);
    keys.stateOf(check('b', 1, 1), 0); // drops a
    expect(keys.touch('a', first)).toBe(first);
    expect(keys.get('a')).toBe(first);
    expect(keys.get('b')).toBeUndefined(); // maxKeys 1: b made way
    keys.stateOf(check('b', 1, 1), 0); // drops a again
    const second = keys.stateOf(check('a', 1, 1), 0);
    expect(keys.touch('a', first)).toBe(second);
  });

  it('releases a lease: queued for giving back, the key no longer marked', () => {
    const { keys, givenBack } = table(10);
    const state = keys.stateOf(check('a', 4, 8), 0);
    state.leaseMs = 750;
    keys.leased.add('a');
    keys.release('a', state);
    expect(givenBack).toEqual([['a', 4, 8, 3]]);
    expect(state.leaseMs).toBe(0);
    expect(keys.leased.has('a')).toBe(false);
  });

  it('releases every lease at once, and forgets keys (their lease not given back: the bucket is being reset)', () => {
    const { keys, givenBack } = table(10);
    for (const key of ['a', 'b', 'c']) {
      keys.stateOf(check(key, 1, 10), 0).leaseMs = 2_000;
      keys.leased.add(key);
    }
    keys.forget('b');
    expect(keys.get('b')).toBeUndefined();
    keys.releaseAll();
    expect(givenBack).toEqual([
      ['a', 1, 10, 2],
      ['c', 1, 10, 2],
    ]);
    expect(keys.leased.size).toBe(0);
  });

  it('gives an expired lease back at once, alone; in a fleet, owes it for owedForMs to the next call, then gives it back', () => {
    const alone = table(10);
    const state = alone.keys.stateOf(check('a', 10, 10), 0);
    state.leaseMs = 200;
    alone.keys.leased.add('a');
    alone.keys.expire('a', state);
    expect(alone.givenBack).toEqual([['a', 10, 10, 2]]);

    const fleet = table(10, 1_000, 1_000);
    const held = fleet.keys.stateOf(check('b', 10, 10), 0);
    Object.assign(held, { leaseMs: 200, lumpMs: 100, owedMs: 100, paceSavedMs: 50 });
    fleet.keys.leased.add('b');
    fleet.clock.advance(500);
    fleet.keys.expire('b', held);
    // Not spendable any more, and no give-back of its own: owed until 1.5 s (store clock).
    expect(fleet.givenBack).toEqual([]);
    expect(held).toMatchObject({ leaseMs: 0, lumpMs: 0, paceSavedMs: 0, owedMs: 300 });
    expect(held.leaseExpiresAt).toBe(1_500);
    expect(fleet.keys.leased.has('b')).toBe(true);
    // No call came for the key by then: the owed tokens go back on their own.
    fleet.keys.expire('b', held);
    expect(fleet.givenBack).toEqual([['b', 10, 10, 3]]);
    expect(held.owedMs).toBe(0);
    expect(fleet.keys.leased.has('b')).toBe(false);
  });

  describe('sweep', () => {
    /** Enough sweep steps for a couple of whole passes. */
    const sweepAll = (keys: KeyTable, now: number) => {
      for (let i = 0; i < keys.size + 4; i++) keys.sweep(now);
    };

    it('drops keys unseen for idleMs with nothing worth keeping, a couple per step', () => {
      const { keys } = table(100, 1_000);
      for (let i = 0; i < 6; i++) keys.stateOf(check(`k${i}`, 1, 1), 0);
      keys.sweep(999);
      expect(keys.size).toBe(6);
      keys.sweep(1_000);
      expect(keys.size).toBe(4); // two entries per step
      sweepAll(keys, 1_000);
      expect(keys.size).toBe(0);
    });

    it('keeps keys with a bucket not yet full again, a live hold, or a call in flight', () => {
      const { keys } = table(100, 1_000);
      keys.stateOf(check('view', 1, 1), 0).shadowTat = 5_000;
      keys.stateOf(check('held', 1, 1), 0).denyUntil = 5_000;
      keys.stateOf(check('pending', 1, 1), 0).pending = Promise.resolve(true);
      keys.stateOf(check('idle', 1, 1), 0);
      sweepAll(keys, 2_000);
      expect([...keys.entries.keys()]).toEqual(['view', 'held', 'pending']);
      sweepAll(keys, 5_000);
      expect([...keys.entries.keys()]).toEqual(['pending']);
    });

    it('keeps a key whose lease is live, and gives an expired lease back (store clock) before dropping the key', () => {
      const { keys, givenBack, clock } = table(100, 1_000);
      const state = keys.stateOf(check('leased', 10, 10), 0);
      state.leaseMs = 300;
      state.leaseExpiresAt = 1_000;
      keys.leased.add('leased');
      sweepAll(keys, 2_000);
      expect(keys.get('leased')).toBe(state);
      expect(givenBack).toEqual([]);
      clock.advance(1_000);
      sweepAll(keys, 2_000);
      expect(givenBack).toEqual([['leased', 10, 10, 3]]);
      expect(keys.get('leased')).toBeUndefined();
      expect(keys.leased.size).toBe(0);
    });

    it('in a fleet, keeps a key whose expired lease is owed, and gives it back once owedForMs is over', () => {
      const { keys, givenBack, clock } = table(100, 1_000, 1_000);
      const state = keys.stateOf(check('owed', 10, 10), 0);
      state.leaseMs = 300;
      state.leaseExpiresAt = 1_000;
      keys.leased.add('owed');
      clock.advance(1_000);
      sweepAll(keys, 2_000);
      expect(givenBack).toEqual([]);
      expect(keys.get('owed')).toBe(state); // unseen for idleMs, but owing
      clock.advance(1_000);
      sweepAll(keys, 3_000);
      expect(givenBack).toEqual([['owed', 10, 10, 3]]);
      expect(keys.get('owed')).toBeUndefined();
    });

    it('gives the live pace of a key it drops (unseen for idleMs, nothing held) back', () => {
      const { keys } = table(100, 1_000);
      const released: string[] = [];
      keys.releasePace = (key) => released.push(key);
      const state = keys.stateOf(check('paced', 10, 10), 0);
      Object.assign(state, { paceRate: 2, paceFrom: 0, paceUntil: 30_000 });
      keys.leased.add('paced');
      sweepAll(keys, 2_000);
      expect(released).toEqual(['paced']); // before: dropped, its pace not given back
      expect(keys.get('paced')).toBeUndefined();
      expect(keys.leased.size).toBe(0);
    });
  });

  describe('first sightings', () => {
    it("keeps no state for a key seen once; its second sighting within idleMs gets one, with the first one's demand", () => {
      const { keys } = table(10, 1_000);
      const a = check('a', 10, 20, 3);
      expect(keys.firstSighting([a], 100)).toBe(true);
      expect(keys.size).toBe(0);
      expect(keys.firstSighting([a], 400)).toBe(false);
      // As if tracked since its first request: 3 tokens asked at 100.
      expect(keys.stateOf(a, 400)).toMatchObject({ score: 3, seenAt: 100, firstSeen: 100 });
      expect(keys.firstSighting([a], 5_000)).toBe(false); // it has a state now
      expect(keys.firstSighting([check('b', 10, 20)], 100)).toBe(true);
      expect(keys.firstSighting([check('b', 10, 20)], 1_100)).toBe(true); // idleMs later: a first sighting again
      expect(keys.size).toBe(1);
    });

    it('takes several checks as a first sighting only if every key is new, and marks none otherwise', () => {
      const { keys } = table(10, 1_000);
      keys.stateOf(check('known', 1, 1), 0);
      expect(keys.firstSighting([check('x', 1, 1), check('known', 1, 1)], 10)).toBe(false);
      expect(keys.firstSighting([check('x', 1, 1)], 10)).toBe(true); // not marked by the request above
      expect(keys.firstSighting([check('y', 1, 1), check('x', 1, 1)], 10)).toBe(false); // x was seen
      expect(keys.firstSighting([check('y', 1, 1), check('z', 1, 1)], 10)).toBe(true);
      expect(keys.firstSighting([check('z', 1, 1)], 10)).toBe(false);
      expect(keys.firstSighting([], 10)).toBe(false);
      // A cost above the burst is denied locally, without a call: not a first sighting, not marked.
      expect(keys.firstSighting([check('v', 1, 1, 2)], 10)).toBe(false);
      expect(keys.firstSighting([check('u', 1, 2), check('v', 1, 1, 2)], 10)).toBe(false);
      expect(keys.firstSighting([check('u', 1, 2), check('v', 1, 1)], 10)).toBe(true);
      // A state made without a sighting starts with no demand.
      expect(keys.stateOf(check('w', 1, 1), 10)).toMatchObject({ score: 0, firstSeen: 10 });
    });
  });
});

describe('Sightings', () => {
  it('is a power of two of slots, as many as the keys asked for, at most MAX_SIGHTING_SLOTS', () => {
    expect(new Sightings(1, 1_000).slots).toBe(1);
    expect(new Sightings(5, 1_000).slots).toBe(8);
    expect(new Sightings(4_096, 1_000).slots).toBe(4_096);
    expect(new Sightings(100_000, 1_000).slots).toBe(MAX_SIGHTING_SLOTS);
    expect(new Sightings(MAX_SIGHTING_SLOTS, 1_000).slots).toBe(MAX_SIGHTING_SLOTS);
  });

  it('remembers a key for windowMs, and tells apart keys in different slots', () => {
    const sightings = new Sightings(MAX_SIGHTING_SLOTS, 1_000);
    // A slot never written matches no key, even at time 0.
    expect(
      Array.from({ length: 1_000 }, (_, i) => `k${i}`).some((key) => sightings.seen(key, 0)),
    ).toBe(false);
    expect(sightings.first('a', 0)).toBe(true);
    expect(sightings.first('a', 999)).toBe(false);
    expect(sightings.seenAt('a', 999)).toBe(0);
    expect(sightings.seen('a', 1_000)).toBe(false);
    expect(sightings.first('a', 1_000)).toBe(true);
    sightings.see('b', 2_000);
    expect(sightings.seenAt('b', 2_500)).toBe(2_000);
    expect(sightings.seen('c', 2_500)).toBe(false);
    // Whole milliseconds, modulo 2^32 (the frame may run for longer than 2^31 ms).
    sightings.see('d', 10.7);
    expect(sightings.seenAt('d', 20.2)).toBe(10);
    sightings.see('e', 2 ** 32 + 5);
    expect(sightings.seenAt('e', 2 ** 32 + 100)).toBe(2 ** 32 + 5);
    expect(sightings.seen('e', 2 ** 32 + 1_005)).toBe(false);
  });

  it('takes a key whose slot another key took since for one never seen (the error that costs nothing)', () => {
    const sightings = new Sightings(1, 1_000);
    expect(sightings.first('a', 0)).toBe(true);
    expect(sightings.first('b', 1)).toBe(true);
    expect(sightings.first('a', 2)).toBe(true);
  });

  it('spreads keys that differ only in their last characters over the slots', () => {
    const slots = 4_096;
    const used = new Set(
      Array.from({ length: slots }, (_, i) => hashOf(`user-${i}`) & (slots - 1)),
    );
    // Random placement fills 1 - 1/e (63 %) of them.
    expect(used.size).toBeGreaterThan(0.55 * slots);
    const sightings = new Sightings(MAX_SIGHTING_SLOTS, 1_000);
    const keys = Array.from({ length: 100 }, (_, i) => `cold-${i}`);
    // 100 keys in 16,384 slots: a collision or two is possible, and only costs a key its state one sighting later.
    expect(keys.every((key) => sightings.first(key, 0))).toBe(true);
    expect(keys.filter((key) => sightings.seen(key, 1)).length).toBeGreaterThanOrEqual(97);
  });
});
