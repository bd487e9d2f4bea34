/** Most slots a {@link Sightings} table has: 1 MiB, allocated once. */
export const MAX_SIGHTING_SLOTS = 65_536;

/**
 * When keys were last seen, in a fixed-size, direct-mapped table of typed
 * arrays: what lets `TwoTierStore` keep no state for a key seen once (its
 * first sighting is a plain RedisStore call) and start tracking it at its
 * second sighting within `windowMs`.
 *
 * A key's slot and fingerprint come from a 32-bit hash of it; a slot holds
 * the last key written there. So the table is approximate both ways, and
 * either error only costs the store what it cost before this table:
 * - a key whose slot another key took since is taken for one never seen
 *   (one more decision without local state: one Redis call, as anyway);
 * - a new key whose hash matches a recent one in its slot is taken for seen
 *   (it gets its local state one sighting early).
 *
 * Nothing is allocated per key, nothing is retained (no key string, no
 * object for the garbage collector to promote and sweep: the cost that a
 * per-key record left behind by every cold key had, at tens of thousands of
 * new keys a second), and nothing needs sweeping: a slot ages out by its time.
 *
 * @internal
 */
export class Sightings {
  /**
   * Slot `s` at `2s` and `2s + 1`, side by side so that a lookup reads one
   * cache line: its key's tag (the key's hash plus one, so that an empty
   * slot, 0, matches no key; the hash's bits beyond the slot index tell keys
   * apart), and when that key was seen (the store's relative ms). Left as
   * allocated (zeros) until written: the memory is only touched as it is
   * used.
   */
  private readonly table: Float64Array;
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
    this.table = new Float64Array(2 * slots);
  }

  /** How many keys the table can hold at once. */
  get slots(): number {
    return this.mask + 1;
  }

  /** When `key` was seen within `windowMs` before `now`, or `undefined`. */
  seenAt(key: string, now: number): number | undefined {
    const hash = hashOf(key);
    const slot = 2 * (hash & this.mask);
    const at = this.table[slot + 1]!;
    return this.table[slot] === tagOf(hash) && now - at < this.windowMs ? at : undefined;
  }

  /** True when `key` was seen within `windowMs` before `now`. */
  seen(key: string, now: number): boolean {
    return this.seenAt(key, now) !== undefined;
  }

  /** Records a sighting of `key` at `now` (replacing whatever its slot held). */
  see(key: string, now: number): void {
    const hash = hashOf(key);
    const slot = 2 * (hash & this.mask);
    this.table[slot] = tagOf(hash);
    this.table[slot + 1] = now;
  }

  /**
   * {@link see} for a key not seen within `windowMs` (one hash for both):
   * true when it was not, and is recorded at `now`; false (nothing written)
   * when it was.
   */
  first(key: string, now: number): boolean {
    const hash = hashOf(key);
    const slot = 2 * (hash & this.mask);
    const tag = tagOf(hash);
    if (this.table[slot] === tag && now - this.table[slot + 1]! < this.windowMs) return false;
    this.table[slot] = tag;
    this.table[slot + 1] = now;
    return true;
  }
}

/** A hash as a slot stores it: never 0, the value of a slot never written. */
function tagOf(hash: number): number {
  return (hash >>> 0) + 1;
}

/**
 * FNV-1a over the key's UTF-16 code units, then MurmurHash3's finalizer, so
 * that the low bits (the slot) depend on every character: keys that differ
 * only in their last digits land in different slots.
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
