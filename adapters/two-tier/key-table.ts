import type { TokenBucketCheck } from '../../lib/store/rate-limit-store.interface.js';
import { TOKEN_EPSILON } from '../../lib/algorithms/token-epsilon.js';
import { SweptMap } from '../../lib/store/swept-map.js';
import type { GiveBackQueue } from './give-back-queue.js';
import { emptyLease, givesBackAtClose, holds, newKeyState, type KeyState } from './key-state.js';
import { Sightings } from './sightings.js';

/** A check that can never be admitted: `sortChecks` denies it without a Redis call. */
function overBurst(check: TokenBucketCheck): boolean {
  return check.cost > check.limit.burst + TOKEN_EPSILON;
}

/** Entries examined by the incremental sweep on each decision. */
const SWEEP_STEP = 2;

/**
 * The keys the local tier tracks: bucket key → {@link KeyState}, in recency
 * order on a {@link SweptMap}, bounded by `maxKeys` (past it, the least
 * recently used key is dropped), swept a couple of keys per decision, and
 * indexed by lease ({@link leased}). A key gets its state at its second
 * sighting within `idleMs`: the first is only marked in a fixed-size
 * {@link Sightings} table (see {@link firstSighting}).
 *
 * A key dropped while it holds a lease gives the lease back (through the
 * {@link GiveBackQueue}): dropping a key only costs it Redis calls again.
 *
 * @internal
 */
export class KeyTable extends SweptMap<string, KeyState> {
  /** Keys holding a lease (what the lease expiry timer scans). */
  readonly leased = new Set<string>();
  /**
   * Gives back the part of a key's pace not yet due (`pace.ts`), when the key
   * is dropped or the store closes: set by the store (a Redis call).
   */
  releasePace: ((key: string, state: KeyState) => void) | undefined;
  /** Keys seen once, recently, without a state (at most `maxKeys` slots). */
  private readonly sightings: Sightings;

  /**
   * @param maxKeys hard cap on the keys held
   * @param idleMs a key unseen this long, with nothing worth keeping, is swept (`leaseTtlMs`)
   * @param clock the store's clock, which times leases
   * @param giveBacks where the leases of dropped keys go
   */
  constructor(
    private readonly maxKeys: number,
    private readonly idleMs: number,
    private readonly clock: { now(): number },
    private readonly giveBacks: GiveBackQueue,
    /** How long an expired lease waits, owed, for the key's next call (0: given back at once; see {@link expire}). */
    private readonly owedForMs = 0,
  ) {
    super();
    this.sightings = new Sightings(maxKeys, idleMs);
  }

  /**
   * True when no key of `checks` has a state or was seen within `idleMs`
   * (and none costs more than its burst, which is denied without a call):
   * each key is then marked as seen at `now`, and nothing else is kept.
   * `TwoTierStore` sends such a request as RedisStore would: a key's first
   * request asks no lease anyway (see `leaseTarget`). What it gives up: a
   * second request for the key while the first one's call is in flight
   * makes a call of its own instead of waiting for that one (at most one
   * call more per key and burst of requests). A state made and swept for
   * every key seen once cost Node 17 µs per decision on new keys, against
   * RedisStore's 9 (`bench/redis`, cold keys, 16 in flight).
   */
  firstSighting(checks: readonly TokenBucketCheck[], now: number): boolean {
    const count = checks.length;
    if (count === 1) {
      const check = checks[0]!;
      return (
        !this.entries.has(check.key) && !overBurst(check) && this.sightings.first(check.key, now)
      );
    }
    if (count === 0) return false;
    // Several keys: mark them only if none is known (a key marked here must be its first sighting).
    for (let i = 0; i < count; i++) {
      const check = checks[i]!;
      if (this.entries.has(check.key) || overBurst(check) || this.sightings.seen(check.key, now))
        return false;
    }
    for (let i = 0; i < count; i++) this.sightings.see(checks[i]!.key, now);
    return true;
  }

  /**
   * The key's state, created (and the oldest evicted past `maxKeys`) when
   * missing. A key sighted within `idleMs` starts with that sighting's
   * demand, taken to have cost what this check does: as if it had been
   * tracked from its first request.
   */
  stateOf(check: TokenBucketCheck, now: number): KeyState {
    let state = this.entries.get(check.key);
    if (state === undefined) {
      if (this.entries.size >= this.maxKeys) this.evictOldest();
      state = newKeyState(check.limit, now);
      const seenAt = this.sightings.seenAt(check.key, now);
      if (seenAt !== undefined && seenAt <= now) {
        state.score = check.cost;
        state.seenAt = seenAt;
        state.firstSeen = seenAt;
      }
      this.set(check.key, state);
    }
    return state;
  }

  /**
   * Moves a key to the most recently used end (re-inserting it if it was
   * evicted meanwhile). Answers the key's state: `state`, or the one that
   * replaced it while it was out of the table.
   */
  touch(key: string, state: KeyState): KeyState {
    const current = this.entries.get(key);
    if (current !== undefined && current !== state) return current;
    this.entries.delete(key);
    if (this.entries.size >= this.maxKeys) this.evictOldest();
    this.set(key, state);
    return state;
  }

  /**
   * {@link touch} for a key Redis just answered, asked at `now` (relative
   * ms). A key first seen at `now` and still in the table stays where its
   * creation put it, at the recent end (give or take the keys created during
   * one round trip): moving it again would cost every cold key a second
   * `Map` delete and insert, a tenth of the local tier's own work on a cold
   * key (`bench/redis`, cold keys, `--cpu-prof`).
   */
  answered(key: string, state: KeyState, now: number): KeyState {
    if (state.firstSeen === now && this.entries.get(key) === state) return state;
    return this.touch(key, state);
  }

  /** Queues the key's unspent lease for giving back (sent at the next flush of the {@link GiveBackQueue}). */
  release(key: string, state: KeyState): void {
    this.giveBacks.add(key, state.rate, state.burst, this.takeLease(key, state));
  }

  /**
   * Empties the key's lease, with what it saved and what it owes (`owedMs`),
   * and returns the tokens to give back: the one place a lease ends, whether
   * it goes back alone ({@link release}) or with its pace (`releasePace`).
   */
  takeLease(key: string, state: KeyState): number {
    const tokens = (emptyLease(state) * state.rate) / 1000;
    if (!givesBackAtClose(state)) this.leased.delete(key);
    return tokens;
  }

  /**
   * The key's lease is past `leaseExpiresAt` (store clock). In a fleet
   * (`owedForMs` > 0) what is left of it is owed rather than given back at
   * once: a key still in demand calls again soon, and its next pace carries
   * the tokens back (`giveBack`) where a give-back of their own would cost a
   * Redis call (a light instance's join lease, spent at its demand and
   * expiring with a token or two left). Owed tokens are not spent: what the
   * fleet loses is that they come back up to `owedForMs` later. A key with
   * only tokens owed left, past that time, gives them back now.
   */
  expire(key: string, state: KeyState): void {
    if (this.owedForMs <= 0 || state.leaseMs <= 0) return this.release(key, state);
    state.owedMs = emptyLease(state);
    state.leaseExpiresAt = this.clock.now() + this.owedForMs;
  }

  /** Releases every lease held (at close). */
  releaseAll(): void {
    for (const key of [...this.leased]) {
      const state = this.entries.get(key);
      if (!state) continue;
      this.dropPace(key, state);
      if (holds(state)) this.release(key, state);
    }
  }

  /** A key leaving with a live pace gives back its part not yet due. */
  private dropPace(key: string, state: KeyState): void {
    if (state.paceRate > 0) this.releasePace?.(key, state);
    state.paceRate = 0;
  }

  /** Drops a key and its lease without giving it back (its Redis bucket is being reset). */
  forget(key: string): void {
    if (this.entries.delete(key)) this.leased.delete(key);
  }

  /**
   * A couple of entries per decision: drops keys with nothing worth keeping
   * (no lease, no live denial, no call in flight, bucket full again, unseen
   * for `idleMs`) and gives back expired leases.
   */
  sweep(now: number): void {
    // Nothing to sweep (only new keys so far): no walk started, no iterator made.
    if (this.entries.size === 0) return;
    for (let examined = 0; examined < SWEEP_STEP; examined++) {
      const key = this.nextToSweep();
      if (key === undefined) return;
      const state = this.entries.get(key)!;
      if (holds(state) && this.clock.now() >= state.leaseExpiresAt) this.expire(key, state);
      if (holds(state)) continue;
      // A bucket not yet full again is still worth its view (what local denials report).
      if (
        state.pending !== undefined ||
        state.denyUntil > now ||
        (state.shadowTat !== undefined && state.shadowTat > now)
      )
        continue;
      // Unseen for a whole demand window: it would start over as a cold key (a live pace,
      // which it no longer needs, goes back).
      if (now - state.seenAt >= this.idleMs) this.drop(key, state);
    }
  }

  private evictOldest(): void {
    const key = this.oldest();
    if (key === undefined) return;
    const state = this.entries.get(key);
    if (state) this.drop(key, state);
  }

  /** Drops a key from the table, giving back what it has: its live pace, its lease. */
  private drop(key: string, state: KeyState): void {
    this.dropPace(key, state);
    if (holds(state)) this.release(key, state);
    this.entries.delete(key);
    this.leased.delete(key);
  }
}
