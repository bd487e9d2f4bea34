/**
 * Most slots a {@link Sightings} table has (8 bytes each: 128 KiB), allocated
 * once. At 50,000 new keys a second a sighting then lasts about 0.33 s on
 * average before another key takes its slot: a key asked a few times a
 * second (what it takes to be worth a lease) is caught within a few
 * requests; at 5,000 new keys a second, a sighting outlasts the default
 * `leaseTtlMs`. A bigger table costs every new key more, as its lookups
 * miss the CPU caches more often: `bench/redis` cold keys under
 * `--cpu-prof`, about 0.2 µs a lookup at 32,768 slots and 0.1 at 8,192,
 * where RedisStore's whole decision costs Node about 9 µs.
 */
export const MAX_SIGHTING_SLOTS = 16_384;

/**
 * When keys were last seen, in a fixed-size, direct-mapped table of 32-bit
 * integers: what lets `TwoTierStore` keep no state for a key seen once (its
 * first sighting is a plain RedisStore call) and start tracking it at its
 * second sighting within `windowMs`.
 *
 * A key's slot and tag come from a 32-bit hash of it; a slot holds the last
 * key written there. So the table is approximate both ways, and either error
 * only costs the store what it cost before this table:
 * - a key whose slot another key took since is taken for one never seen
 *   (one more decision without local state: one Redis call, as anyway);
 * - a new key whose tag matches a recent one in its slot is taken for seen
 *   (it gets its local state one sighting early).
 *
 * Nothing is allocated per key, nothing is retained (no key string, no
 * object for the garbage collector to promote and sweep: the cost that a
 * per-key record left behind by every new key had, at tens of thousands of
 * new keys a second), and nothing needs sweeping: a slot ages out by its time.
 *
 * @internal
 */
export class Sightings {
  /**
   * Slot `s` at `2s` and `2s + 1`, side by side so that a lookup reads one
   * cache line: its key's tag (the hash, never 0: a slot never written
   * matches no key; its bits beyond the slot index tell keys apart), and
   * when that key was seen, in whole milliseconds of the store's relative
   * frame modulo 2^32 (ages are taken modulo 2^32 too: exact up to 24 days).
   */
  private readonly table: Int32Array;
  private readonly mask: number;

  /**
   * @param keys how many keys it should tell apart at once (`maxKeys`): the
   *   slots, a power of two, are the fewest that hold that many, at most
   *   {@link MAX_SIGHTING_SLOTS}
   * @param windowMs how long a sighting counts (`leaseTtlMs`: what a key's
   *   demand is measured over)
   */
  constructor(
    keys: number,
    private readonly windowMs: number,
  ) {
    let slots = 1;
    while (slots < keys && slots < MAX_SIGHTING_SLOTS) slots *= 2;
    this.mask = slots - 1;
    this.table = new Int32Array(2 * slots);
  }

  /** How many keys the table can hold at once. */
  get slots(): number {
    return this.mask + 1;
  }

  /** When `key` was seen within `windowMs` before `now` (to the millisecond below), or `undefined`. */
  seenAt(key: string, now: number): number | undefined {
    const tag = tagOf(key);
    const slot = 2 * (tag & this.mask);
    if (this.table[slot] !== tag) return undefined;
    const ms = Math.floor(now);
    const age = (ms - this.table[slot + 1]!) | 0;
    return age < this.windowMs ? ms - age : undefined;
  }

  /** True when `key` was seen within `windowMs` before `now`. */
  seen(key: string, now: number): boolean {
    return this.seenAt(key, now) !== undefined;
  }

  /** Records a sighting of `key` at `now` (replacing whatever its slot held). */
  see(key: string, now: number): void {
    const tag = tagOf(key);
    const slot = 2 * (tag & this.mask);
    this.table[slot] = tag;
    this.table[slot + 1] = Math.floor(now);
  }

  /**
   * {@link see} for a key not seen within `windowMs` (one hash for both):
   * true when it was not, and is recorded at `now`; false (nothing written)
   * when it was.
   */
  first(key: string, now: number): boolean {
    const tag = tagOf(key);
    const slot = 2 * (tag & this.mask);
    const ms = Math.floor(now);
    if (this.table[slot] === tag && ((ms - this.table[slot + 1]!) | 0) < this.windowMs)
      return false;
    this.table[slot] = tag;
    this.table[slot + 1] = ms;
    return true;
  }
}

/** A key's tag: its {@link hashOf}, 1 for a hash of 0 (0 marks a slot never written). */
function tagOf(key: string): number {
  return hashOf(key) || 1;
}

/**
 * FNV-1a over the key's UTF-16 code units, then MurmurHash3's finalizer, so
 * that the low bits (the slot) depend on every character: keys that differ
 * only in their last digits land in different slots. A signed 32-bit integer.
 */
export function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}
