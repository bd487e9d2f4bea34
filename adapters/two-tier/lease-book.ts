import {
  emissionIntervalMs,
  gcraConsume,
  gcraPeek,
  type GcraOutcome,
  type RateLimitDecision,
} from '../../lib/algorithms/gcra.js';
import { TOKEN_EPSILON } from '../../lib/algorithms/token-epsilon.js';
import type { TokenBucketCheck } from '../../lib/store/rate-limit-store.interface.js';
import type { LeaseCheck } from '../redis/index.js';
import type { DenyCache } from './deny-cache.js';
import type { GiveBackQueue } from './give-back-queue.js';
import { givesBackAtClose, holds, type KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import { LeaseExpiry } from './lease-expiry.js';
import { FLEET_DEMAND_SHARE, fleetHoldTokens, joinLease } from './fleet-share.js';
import {
  firstSightingAsk,
  fleetCallWindowMs,
  fleetSize,
  leaseAsk,
  rememberFleet,
} from './fleet-asks.js';
import {
  cameShort,
  contended,
  holdTokens,
  isHot,
  LEASE_DEMAND_SHARE,
  leaseCap,
  leaseTarget,
  relaxed,
} from './lease-sizing.js';
import { PaceBook } from './pace-book.js';

/** A lease spent ahead of a Redis call, put back if the request is denied. */
export interface Reservation {
  readonly index: number;
  readonly key: string;
  readonly state: KeyState;
  readonly outcome: GcraOutcome;
  readonly previous: number | undefined;
  readonly chargedMs: number;
  readonly leaseMs: number;
  /** The lease's `leaseExpiresAt` when reserved: put back after it, the tokens are owed, not spendable. */
  readonly expiresAt: number;
}

/**
 * The leases this instance holds, kept in each key's {@link KeyState}
 * (`score`, `seenAt`, `firstSeen`, `target`, `leaseMs`, `leaseExpiresAt`,
 * `contention`) and indexed by {@link KeyTable.leased}:
 * - demand tracking and lease sizing ({@link observe}, see `lease-sizing.ts`);
 * - spending: {@link covers}, {@link spend}, and {@link reserve} /
 *   {@link unreserve} for leases spent ahead of a Redis call;
 * - Redis' answers ({@link settle}): leases granted, and hot keys'
 *   contention and holds after a denial or a shortfall;
 * - expiry: a store-wide timer ({@link LeaseExpiry}) while leases are held.
 *
 * @internal
 */
export class LeaseBook {
  /** Redis answers that granted extra tokens, or a pace. */
  taken = 0;
  /** Extra tokens leased from Redis, paces' tokens included. */
  takenTokens = 0;

  private readonly expiry: LeaseExpiry;

  /**
   * @param leaseTtlMs longest time a lease is held, and the time constant of demand
   * @param maxLeaseShare largest lease as a share of the burst
   * @param clock times leases
   * @param keys where the leases are kept
   * @param giveBacks where expired leases go
   * @param denials where hot keys are held
   * @param random uniform draws in [0, 1) that spread the holds of a fleet (`fleet-share.ts`)
   * @param join true when several instances share the buckets (the `instances` option): keys ask to
   *   join a fleet already leasing them (`joinExtra`, `fleet-share.ts`), and hot keys ask paces (`pace.ts`)
   * @param instances the `instances` option
   * @param chargedFromNow Redis charges a pace from the request's own `now` (`time: 'client'`)
   */
  constructor(
    private readonly leaseTtlMs: number,
    private readonly maxLeaseShare: number,
    private readonly clock: { now(): number },
    private readonly keys: KeyTable,
    private readonly giveBacks: GiveBackQueue,
    private readonly denials: DenyCache,
    private readonly random: () => number = Math.random,
    readonly join = false,
    instances = 1,
    chargedFromNow = false,
  ) {
    this.expiry = new LeaseExpiry(keys, giveBacks, clock, leaseTtlMs);
    this.paces = new PaceBook(leaseTtlMs, clock, keys, denials, join, instances, chargedFromNow, {
      granted: (tokens) => {
        this.taken++;
        this.takenTokens += tokens;
        this.expiry.start();
      },
    });
  }

  /** Hot keys' paces when instances share the buckets (`pace-book.ts`). */
  readonly paces: PaceBook;

  /** The window of the fleet count a lease call for `asked` asks (`fleetCallWindowMs`). */
  fleetWindowMs(asked: readonly LeaseCheck[], states: readonly KeyState[]): number {
    return fleetCallWindowMs(asked, states, this.leaseTtlMs);
  }

  /**
   * Records demand, and sizes the next lease from the demand seen before
   * this request (see {@link leaseTarget}).
   */
  observe(check: TokenBucketCheck, state: KeyState, now: number): void {
    const elapsed = now - state.seenAt;
    // Demand decays with time constant leaseTtlMs (no timer per key; time going back decays nothing).
    const prior = elapsed > 0 ? state.score * Math.exp(-elapsed / this.leaseTtlMs) : state.score;
    const target = leaseTarget(
      prior,
      now - state.firstSeen,
      this.leaseTtlMs,
      this.maxLeaseShare,
      check.limit.burst,
      state.instances > 1 ? FLEET_DEMAND_SHARE : LEASE_DEMAND_SHARE,
    );
    state.target = target;
    state.score = prior + check.cost;
    if (elapsed > 0) state.seenAt = now;
  }

  /** True when the key's live lease holds `check.cost` tokens (an expired lease is given back first). */
  covers(check: TokenBucketCheck, state: KeyState, now: number): boolean {
    if (state.lumpMs > 0) this.paces.lapseLump(check, state, now);
    if (state.paceRate > 0 || state.endedPaceRate > 0) this.paces.credit(check, state, now);
    if (state.leaseMs <= 0) return false;
    if (this.clock.now() >= state.leaseExpiresAt) {
      this.keys.expire(check.key, state);
      return false;
    }
    const need = check.cost * emissionIntervalMs(check.limit);
    return state.leaseMs + TOKEN_EPSILON * need >= need;
  }

  /**
   * What the lease call asks for the checks at `indices` (whose states are
   * `states`): each its cost, and up to its lease target on top. A leftover
   * lease too small for its request (fractional costs, a rate that changed)
   * and tokens owed (unless a pace ask carries them) are released first, to
   * go back in the same pipeline: Redis then decides on the bucket as if
   * this instance had never held them, as the view assumes.
   */
  ask(
    checks: readonly TokenBucketCheck[],
    indices: readonly number[],
    states: readonly KeyState[],
    now = 0,
  ): LeaseCheck[] {
    const clockNow = this.clock.now();
    const asked = indices.map((i, j): LeaseCheck => {
      const check = checks[i]!;
      const state = states[j]!;
      const ask = leaseAsk(check, state, this.joinOf(check), clockNow, this.leaseTtlMs);
      // A call of several keys may span Cluster slots, where paces (and what they carry back) are
      // not sent: what the key owes then goes back by a give-back before the call (below).
      const pace = this.paces.ask(check, state, ask, now, indices.length === 1);
      return pace === undefined ? ask : { ...ask, pace };
    });
    indices.forEach((i, j) => {
      if (holds(states[j]!)) this.keys.release(checks[i]!.key, states[j]!);
    });
    return asked;
  }

  /**
   * The checks a first sighting asks when instances share the buckets
   * (`join`, see `firstSightingAsk`); `undefined` otherwise (a plain consume).
   */
  joinAsk(checks: readonly TokenBucketCheck[]): LeaseCheck[] | undefined {
    return this.join ? firstSightingAsk(checks, (check) => this.joinOf(check)) : undefined;
  }

  /**
   * What a fleet call answered for a bucket (see `rememberFleet`), dated on the
   * store clock as of `sentAt`, when the call was sent: Redis wrote the fleet
   * set no earlier, and its expiry runs from that write, not from when this
   * instance got round to the answer (a stalled event loop can make that
   * later than the set's whole life).
   */
  rememberFleet(
    state: KeyState,
    epoch?: string,
    load?: number,
    weight?: number,
    instances?: number,
    sentAt = this.clock.now(),
  ): void {
    rememberFleet(state, sentAt, epoch, load, weight, instances);
  }

  /** The store clock's time (what dates a fleet call's answer, `rememberFleet`). */
  clockNow(): number {
    return this.clock.now();
  }

  private joinOf(check: TokenBucketCheck): number {
    if (!this.join) return 0;
    const { burst } = check.limit;
    return joinLease(leaseCap(this.maxLeaseShare, burst), check.cost, burst);
  }

  /** Spends `check.cost` from the key's lease (the caller checked that it covers it). */
  spend(check: TokenBucketCheck, state: KeyState, now: number): GcraOutcome {
    const outcome = gcraConsume(state.shadowTat, now, check.limit, check.cost);
    const interval = emissionIntervalMs(check.limit);
    state.shadowTat = outcome.tat;
    const spentMs = check.cost * interval;
    state.leaseMs = Math.max(0, state.leaseMs - spentMs);
    // A lump is spent first (it lapses), then a pace's savings (spent, they make room for the
    // next tokens due).
    const fromLump = Math.min(state.lumpMs, spentMs);
    state.lumpMs -= fromLump;
    state.paceSavedMs = Math.min(
      Math.max(0, state.paceSavedMs - (spentMs - fromLump)),
      state.leaseMs,
    );
    if (state.leaseMs <= TOKEN_EPSILON * interval) {
      state.leaseMs = 0;
      // Tokens still owed (a lapsed lump, an expired lease), or a live pace, keep the key among
      // those released at close.
      if (!givesBackAtClose(state)) this.keys.leased.delete(check.key);
    }
    return outcome;
  }

  /** Spends the lease of check `index` ahead of a Redis call that decides whether it stands. */
  reserve(index: number, check: TokenBucketCheck, state: KeyState, now: number): Reservation {
    const previous = state.shadowTat;
    const current = previous === undefined || previous < now ? now : previous;
    const leaseMs = state.leaseMs;
    const outcome = this.spend(check, state, now);
    return {
      index,
      key: check.key,
      state,
      outcome,
      previous,
      chargedMs: outcome.tat - current,
      leaseMs: leaseMs - state.leaseMs,
      expiresAt: state.leaseExpiresAt,
    };
  }

  /** Puts a reservation back (the request was denied, or Redis failed). */
  unreserve(reservation: Reservation): void {
    const { state } = reservation;
    // Untouched since: restore exactly; else take back only this charge.
    state.shadowTat =
      state.shadowTat === reservation.outcome.tat
        ? reservation.previous
        : state.shadowTat! - reservation.chargedMs;
    // Put back after its lease expired (in a fleet, `KeyTable.expire` may have dated the key anew
    // meanwhile): the tokens are owed, never spent past the lease's life.
    if (this.clock.now() >= reservation.expiresAt) state.owedMs += reservation.leaseMs;
    else state.leaseMs += reservation.leaseMs;
    if (holds(state) && this.keys.get(reservation.key) === state)
      this.keys.leased.add(reservation.key);
  }

  /** A pace renewal (`renewal`) also took `extra` of the bucket's own tokens: held as a lease. */
  takeExtra(check: TokenBucketCheck, state: KeyState, extra: number): void {
    if (extra > 0) this.grant(check.key, state, extra, emissionIntervalMs(check.limit));
  }

  /**
   * Redis granted `extra` tokens for `check`'s key (each `intervalMs` of bucket
   * time): held until `leaseTtlMs` from now.
   */
  private grant(key: string, state: KeyState, extra: number, intervalMs: number): void {
    state.leaseMs += extra * intervalMs;
    state.leaseExpiresAt = Math.max(state.leaseExpiresAt, this.clock.now() + this.leaseTtlMs);
    this.keys.leased.add(key);
    this.taken++;
    this.takenTokens += extra;
    this.expiry.start();
  }

  /**
   * Redis answered the lease call for `check` (`allowed`: for the whole
   * request): the key's view becomes Redis' bucket without this instance's
   * leftover lease, the `extra` tokens granted join the lease, and a hot key
   * is held in the {@link DenyCache} after a denial or a lease that came back
   * short (see `lease-sizing.ts`), for as long as its share of the fleet
   * needs when Redis counted the `instances` leasing it (`fleet-share.ts`).
   * Answers what the check reports.
   */
  settle(
    check: TokenBucketCheck,
    state: KeyState,
    answer: RateLimitDecision,
    extra: number,
    allowed: boolean,
    now: number,
    asked = state.target,
    instances = 0,
  ): RateLimitDecision {
    const interval = emissionIntervalMs(check.limit);
    if (instances > 0) state.instances = instances;
    const leftover = state.leaseMs;
    state.rate = check.limit.rate;
    state.burst = check.limit.burst;
    // Redis' bucket includes this instance's leftover lease; the view excludes it.
    state.shadowTat = now + answer.resetMs - leftover;
    const exact = leftover === 0;
    if (allowed) {
      if (extra > 0) this.grant(check.key, state, extra, interval);
      // Short of what this call asked (`asked`), not of the target now: requests
      // that arrived meanwhile may have raised it, and the bucket is not dry for that.
      if (cameShort(asked, extra, check.cost, check.limit.burst)) {
        // The bucket ran dry: calling again before a whole lease has
        // refilled would fetch a token or two per call.
        state.contention = contended(state.contention);
        const left = Math.max(0, answer.remaining - extra);
        this.denials.holdAfterShortLease(check, state, now, this.holdTokens(check, state) - left);
      } else {
        if (extra > 0) state.contention = relaxed(state.contention);
        this.denials.clear(state);
        // A whole lease that left the bucket drier than another batch, with a fleet
        // draining it: the next call waits for this instance's share to refill,
        // as after a short one (calling as soon as the lease is spent would come short).
        if (extra > 0 && state.instances > 1 && isHot(asked)) {
          const left = Math.max(0, answer.remaining - extra);
          if (left < check.cost + asked)
            this.denials.holdAfterShortLease(
              check,
              state,
              now,
              this.holdTokens(check, state) - left,
            );
        }
      }
      return exact ? answer : { ...gcraPeek(state.shadowTat, now, check.limit), allowed: true };
    }
    if (!answer.allowed && Number.isFinite(answer.retryAfterMs)) {
      let waitMs = answer.retryAfterMs;
      // Hot key (here, or across the fleet it asked to join): wait for a whole lease, not the first token.
      if (isHot(Math.max(state.target, asked))) {
        state.contention = contended(state.contention);
        waitMs += Math.max(0, this.holdTokens(check, state) - check.cost) * interval;
      }
      this.denials.holdAfterDenial(check, state, now, waitMs);
      return waitMs === answer.retryAfterMs ? answer : { ...answer, retryAfterMs: waitMs };
    }
    return exact
      ? answer
      : { ...gcraPeek(state.shadowTat, now, check.limit), allowed: answer.allowed };
  }

  /**
   * Tokens a hot key waits for after a short or denied call: its share of
   * the fleet Redis counted (`fleetHoldTokens`), else, uncounted (checks
   * across Cluster slots), as the contention it learned says (`holdTokens`).
   */
  private holdTokens(check: TokenBucketCheck, state: KeyState): number {
    const { cost, limit } = check;
    return state.instances > 0
      ? fleetHoldTokens(state.target, fleetSize(state), cost, limit.burst, this.random())
      : holdTokens(state.target, state.contention, cost, limit.burst);
  }

  /** Stops the expiry timer and gives every lease back (at close). */
  close(): void {
    this.expiry.close();
    this.keys.releaseAll();
  }
}
