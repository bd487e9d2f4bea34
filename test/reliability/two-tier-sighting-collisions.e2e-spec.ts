/**
 * TwoTierStore's first-sighting table under keys crafted to collide in it
 * (issue 26, item 9). The table (`adapters/two-tier/sightings.ts`) is
 * direct-mapped: 16,384 slots of a 32-bit tag and a time (128 KiB), indexed
 * by the key's hash (FNV-1a then MurmurHash3's finalizer) masked to the slot
 * count. Two collisions an attacker can craft offline:
 * - whole-tag collisions: two keys with the same 32-bit hash (found here by
 *   offline, by birthday search): a key never seen is taken for one
 *   seen, and gets local state (and leases) one sighting early;
 * - slot collisions: 64 keys sharing one slot (same low 14 bits), each
 *   evicting the others' sightings: keys taken for never seen, over and over.
 *
 * 4 TwoTierStore instances (`instances: 4`) on one Redis and one key prefix,
 * in this process (the multi-process harness of test/two-tier is slower and
 * adds nothing to the table, which is per instance), client time on a
 * virtual clock. Every key is asked for by the 4 stores at once, 40 rounds
 * 5 ms apart, under a limit that never leases (5/min, burst 5) and one whose
 * hot keys lease (200/s, burst 20). Bound asserted: no key is admitted more
 * than its burst plus what its rate refilled over the 195 ms (5; 59). HOLDUP_REPORT=1 prints the figures (for docs/reliability.md).
 */
import type { Redis } from 'ioredis';
import { TwoTierStore } from 'nestjs-holdup/two-tier';
import { hashOf, MAX_SIGHTING_SLOTS } from '../../adapters/two-tier/sightings.js';
import { check } from '../utils/checks.js';
import { connectSharedClient } from '../utils/redis-client.js';
import { uniquePrefix } from '../utils/redis-harness.js';
import { ON_TEST_CLOCK } from '../utils/test-clock-store-options.js';

const T0 = 1_700_000_000_000;
const STORES = 4;
const ROUNDS = 40;
const STEP_MS = 5;
const NAMESPACE = 'tb|login|*|';
/** A limit that never leases (5/min), and one whose hot keys do (200/s, burst 20). */
const LIMITS = [
  { name: '5/min, burst 5', rate: 5 / 60, burst: 5 },
  { name: '200/s, burst 20', rate: 200, burst: 20 },
];
const boundOf = ({ rate, burst }: { rate: number; burst: number }) =>
  Math.floor(burst + (rate * (ROUNDS - 1) * STEP_MS) / 1000);

/**
 * Identities whose keys (under NAMESPACE) have the same 32-bit hash, found
 * offline by a birthday search over `user-<n>` (889,404 keys hashed, 2 s):
 * what an attacker who reads the source does once. Checked below.
 */
const TAG_COLLISIONS: readonly [string, string][] = [
  ['user-38941', 'user-889400'],
  ['user-38940', 'user-889401'],
  ['user-38943', 'user-889402'],
  ['user-38942', 'user-889403'],
];
/** `slot-<n>` for these n: 64 keys in one slot of a 16,384-slot table (found offline). */
const SAME_SLOT = [
  0, 27751, 32980, 37152, 67243, 74671, 103635, 113448, 118961, 121201, 138894, 146386, 166883,
  174379, 188782, 220571, 229327, 248669, 255314, 258378, 261354, 274069, 292032, 318900, 343922,
  357480, 373558, 404069, 410000, 413398, 437863, 451072, 455620, 457552, 458333, 469571, 476365,
  496462, 511524, 541142, 544968, 549498, 569580, 575121, 577964, 630251, 647954, 679098, 742608,
  761765, 777484, 782328, 788033, 791128, 812576, 823158, 836198, 851519, 868302, 871320, 891263,
  908435, 930804, 941691,
];

describe.each(LIMITS)(
  'TwoTierStore: keys crafted to collide in the first-sighting table, 4 instances on one Redis ($name)',
  (limit) => {
    const BOUND = boundOf(limit);
    let client: Redis;
    const stores: TwoTierStore[] = [];
    beforeAll(async () => {
      client = await connectSharedClient();
    });
    afterAll(async () => {
      await Promise.all(stores.map((store) => store.close()));
      await client?.quit();
    });

    it('admits no key more than its burst plus its refill across the 4 stores', async () => {
      const pairs = TAG_COLLISIONS.map(
        ([a, b]) => [NAMESPACE + a, NAMESPACE + b] as [string, string],
      );
      const sameSlot = SAME_SLOT.map((n) => `${NAMESPACE}slot-${n}`);
      const ordinary = Array.from({ length: 16 }, (_, i) => `${NAMESPACE}plain-${i}`);
      expect(pairs).toHaveLength(4);
      for (const [a, b] of pairs) expect(hashOf(a)).toBe(hashOf(b));
      const mask = MAX_SIGHTING_SLOTS - 1;
      expect(new Set(sameSlot.map((key) => hashOf(key) & mask)).size).toBe(1);
      expect(new Set(sameSlot.map((key) => hashOf(key))).size).toBe(sameSlot.length);
      const keys = [...pairs.flat(), ...sameSlot, ...ordinary];

      const keyPrefix = uniquePrefix('sighting-collisions');
      for (let i = 0; i < STORES; i++)
        stores.push(
          new TwoTierStore({
            client,
            keyPrefix,
            ...ON_TEST_CLOCK,
            instances: STORES,
            maxKeys: 100_000, // the table at its largest: 16,384 slots
          }),
        );

      const admitted = new Map<string, number>(keys.map((key) => [key, 0]));
      // One of each colliding pair first, so that its twin arrives as "seen".
      const order = [...pairs.map(([a]) => a), ...keys];
      for (let round = 0; round < ROUNDS; round++) {
        const now = T0 + round * STEP_MS;
        const answers = await Promise.all(
          order.flatMap((key) =>
            stores.map(async (store) => {
              const result = await store.consume({
                checks: [check(key, limit.rate, limit.burst)],
                now,
              });
              return { key, allowed: result.allowed };
            }),
          ),
        );
        for (const { key, allowed } of answers)
          if (allowed) admitted.set(key, admitted.get(key)! + 1);
      }

      const most = (group: string[]) => Math.max(...group.map((key) => admitted.get(key)!));
      const least = (group: string[]) => Math.min(...group.map((key) => admitted.get(key)!));
      const figures = {
        limit: limit.name,
        bound: BOUND,
        attemptsPerKey: `${STORES * ROUNDS} (twice that for the first key of each pair)`,
        tagCollisionPairs: pairs.length,
        tagCollisionAdmitted: [least(pairs.flat()), most(pairs.flat())],
        sameSlotKeys: sameSlot.length,
        sameSlotAdmitted: [least(sameSlot), most(sameSlot)],
        ordinaryAdmitted: [least(ordinary), most(ordinary)],
        stats: stores.map((store) => {
          const s = store.stats();
          return { decisions: s.decisions, redisCalls: s.redisCalls, leases: s.leasesTaken };
        }),
      };
      if (process.env.HOLDUP_REPORT) console.log(JSON.stringify(figures));

      const over = keys.filter((key) => admitted.get(key)! > BOUND);
      expect(over).toEqual([]);
      // Leases never strand a key's burst for long: every key got some of it.
      expect(least(keys)).toBeGreaterThan(0);
    });
  },
);
