import { emissionIntervalMs } from '../../lib/algorithms/gcra.js';
import type { TokenBucketCheck } from '../../lib/store/rate-limit-store.interface.js';
import type { LeaseCheck, LeaseResult } from '../redis/index.js';
import type { PaceAsk } from '../redis/lease.interface.js';
import type { DenyCache } from './deny-cache.js';
import { leaseAsk } from './fleet-asks.js';
import type { KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import { isHot } from './lease-sizing.js';
import {
  demandPerSecond,
  dueTokens,
  heldPace,
  MAX_PACE_MS,
  LUMP_LEASE_TTLS,
  YOUNG_LUMP_LEASE_TTLS,
  MIN_PACE_LEASE_TTLS,
  YOUNG_PACE_LEASE_TTLS,
  PACE_TOKENS,
  renewalDue,
  savingsAfterShrinkMs,
  savingsCapMs,
  savingsCreditMs,
  stillHeld,
  waitForTokens,
} from './pace.js';

/**
 * The paces of this instance's hot keys (issue 29, `pace.ts`), kept in each
 * key's {@link KeyState} (`paceRate`, `paceFrom`, `paceUntil`, `paceDue`):
 * what a lease call asks, Redis' answer, the tokens credited to the key's
 * lease as they come due, the hold while they do not cover a request, and
 * the renewal. Owned by the {@link LeaseBook}, whose leases the due tokens
 * join. Times are the requests' `now` (the store's relative frame), but for
 * lease expiry (the store clock).
 *
 * @internal
 */
export class PaceBook {
  /**
   * @param leaseTtlMs sizes the shortest pace and the demand's time constant
   * @param clock the store clock, which times lease expiry
   * @param keys the key table (`leased` index)
   * @param denials where a key waiting for its pace is held
   * @param join true when several instances share the buckets: hot keys ask paces
   * @param instances the `instances` option (told to Redis: when a share is sure)
   * @param chargedFromNow Redis charges a pace from the request's own `now` (`time: 'client'`)
   * @param events `granted(tokens)`: a pace was granted (the lease book counts it, starts its timer)
   */
  constructor(
    private readonly leaseTtlMs: number,
    private readonly clock: { now(): number },
    private readonly keys: KeyTable,
    private readonly denials: DenyCache,
    private readonly join: boolean,
    private readonly instances: number,
    private readonly chargedFromNow: boolean,
    private readonly events: { granted(tokens: number): void },
  ) {}

  /**
   * Credits the pace's tokens due by `now` to the key's lease, up to the
   * pace's share of the burst unspent (the rest are dropped), and the key's
   * view becomes what it holds; a pace past its end stops, and its savings
   * shrink from then on (`shrinkSavings`).
   */
  credit(check: TokenBucketCheck, state: KeyState, now: number): void {
    if (state.paceRate > 0) {
      const due = dueTokens(state.paceRate, state.paceFrom, state.paceUntil, now);
      const interval = emissionIntervalMs(check.limit);
      const credit = savingsCreditMs(
        due - state.paceDue,
        interval,
        state.paceSavedMs,
        savingsCapMs(state.paceRate, check.cost, check.limit, this.leaseTtlMs, state.paceLentMs),
      );
      state.paceDue = due;
      if (credit > 0) {
        state.leaseMs += credit;
        state.paceSavedMs += credit;
        this.keys.leased.add(check.key);
      }
      this.viewHeld(check, state, now, interval);
      if (now >= state.paceUntil) {
        state.endedPaceRate = state.paceRate;
        state.paceRate = 0;
      }
    }
    if (state.endedPaceRate > 0) this.shrinkSavings(check, state, now);
  }

  /**
   * A pace ended at `paceUntil` and nobody renewed it: from then on Redis'
   * bucket regains the pace's share of the refill, so the savings shrink at
   * the pace's rate, a token for each the bucket regains. Savings and bucket
   * together hold no more than the savings did at the end, and a fleet whose
   * traffic paused spends one burst when it resumes, not the bucket's and
   * its savings both (what live paces saved can still come on top when they
   * hold less than the rate: docs/fleet.md, "The bounds").
   */
  private shrinkSavings(check: TokenBucketCheck, state: KeyState, now: number): void {
    const since = Math.max(state.paceUntil, state.savingsShrunkAt);
    // A request stamped earlier than the last (client time) shrinks nothing, and grows nothing.
    if (now <= since) return;
    const interval = emissionIntervalMs(check.limit);
    const keep = savingsAfterShrinkMs(
      state.paceSavedMs,
      state.endedPaceRate,
      now - since,
      interval,
    );
    state.leaseMs = Math.max(0, state.leaseMs - (state.paceSavedMs - keep));
    state.paceSavedMs = keep;
    state.savingsShrunkAt = now;
    this.viewHeld(check, state, now, interval);
    if (keep <= 0) state.endedPaceRate = 0;
  }

  /**
   * A paced key's view is the tokens it holds: the fleet's paces keep Redis'
   * bucket at empty or below, and this instance may spend what came due to it.
   */
  private viewHeld(check: TokenBucketCheck, state: KeyState, now: number, interval: number): void {
    state.shadowTat = now + check.limit.burst * interval - state.leaseMs;
  }

  /**
   * The key's pace stops at `now` (a new one is being asked): what is due by
   * then stays credited, and its savings shrink from then on, as Redis,
   * which keeps the pace as ended at that moment unless it grants another
   * (`fleet_pace`), counts them.
   */
  private stop(check: TokenBucketCheck, state: KeyState, now: number): void {
    if (state.paceRate <= 0) return;
    this.credit(check, state, now);
    if (state.paceRate <= 0) return;
    state.endedPaceRate = state.paceRate;
    state.paceUntil = Math.min(state.paceUntil, now);
    state.paceRate = 0;
  }

  /**
   * The lump granted with the key's pace lapsed at `lumpUntil`: what is left
   * of it is no longer spent, and is owed back to Redis' bucket with the next
   * pace asked (no call of its own: `pace.ts`, {@link LUMP_LEASE_TTLS}).
   */
  lapseLump(check: TokenBucketCheck, state: KeyState, now: number): void {
    if (now < state.lumpUntil) return;
    const left = Math.min(state.lumpMs, state.leaseMs);
    state.lumpMs = 0;
    if (left <= 0) return;
    state.leaseMs -= left;
    state.owedMs += left;
    state.paceSavedMs = Math.min(state.paceSavedMs, state.leaseMs);
    this.viewHeld(check, state, now, emissionIntervalMs(check.limit));
  }

  /** `ms` of the key's lease (bucket time) taken from the bucket with a pace call: they lapse. */
  private holdAsLump(state: KeyState, ms: number, now: number): void {
    if (ms <= 0) return;
    state.lumpMs += ms;
    const keptFor = this.young(state) ? YOUNG_LUMP_LEASE_TTLS : LUMP_LEASE_TTLS;
    state.lumpUntil = now + keptFor * this.leaseTtlMs;
  }

  /**
   * A live pace that does not cover `check` yet: the key is held until it
   * does (no Redis call: the fleet's shares add up to the rate). True when held.
   */
  hold(check: TokenBucketCheck, state: KeyState, now: number): boolean {
    if (state.paceRate <= 0) return false;
    const missing = check.cost - state.leaseMs / emissionIntervalMs(check.limit);
    const waitMs = Math.min(
      waitForTokens(state.paceRate, missing),
      Math.max(0, state.paceUntil - now),
    );
    this.denials.holdAfterDenial(check, state, now, Math.max(waitMs, 0.001));
    return true;
  }

  /**
   * The pace a lease call (`asked`, sent at `now`) asks when instances share
   * the buckets: for a hot key, or one asking to join a fleet; `undefined` for
   * none. The pace the key held stops. `carry`: the ask also carries back
   * what the key owes (its `giveBack`); false for a call that may span
   * Cluster slots, which sends no pace.
   */
  ask(
    check: TokenBucketCheck,
    state: KeyState,
    asked: LeaseCheck,
    now: number,
    carry = true,
  ): PaceAsk | undefined {
    if (!this.join || !(isHot(state.target) || (asked.joinExtra ?? 0) > 0)) return undefined;
    // The pace held so far stops here: Redis gives back its part not yet due when it answers.
    return this.replacing(check, state, this.of(check, state), now, carry);
  }

  /** True for a key within `leaseTtlMs` of its first request: its demand is read over its age so far. */
  private young(state: KeyState): boolean {
    return state.seenAt - state.firstSeen < this.leaseTtlMs;
  }

  /** A pace of this instance's demand for `check`'s bucket; `giveBack` tokens it held go back with it. */
  of(check: TokenBucketCheck, state: KeyState, ask?: number, giveBack = 0): PaceAsk {
    const ageMs = state.seenAt - state.firstSeen;
    const demand = ask ?? demandPerSecond(state.score, ageMs, this.leaseTtlMs);
    // A young key's demand is measured over a few requests (two that came together read 50/s
    // for a caller of 800/s), and the instances joining next size their shares by it: while
    // its share is unsure, it asks again soon.
    const young = this.young(state);
    const shortestMs = (young ? YOUNG_PACE_LEASE_TTLS : MIN_PACE_LEASE_TTLS) * this.leaseTtlMs;
    return {
      ask: demand,
      tokens: Math.min(PACE_TOKENS, check.limit.burst),
      minMs: shortestMs,
      maxMs: MAX_PACE_MS,
      sureMs: young ? shortestMs : this.leaseTtlMs,
      instances: this.instances,
      giveBack,
      lumpMs: LUMP_LEASE_TTLS * this.leaseTtlMs,
    };
  }

  /**
   * A first sighting (`state`, answered at `now`) denied while other
   * instances lease its bucket: held `leaseTtlMs / 4` at most, a young key's
   * shortest pace (its demand is measured by then), so that its next call
   * asks its pace. The bucket's own wait counts the fleet's paces, charged
   * ahead for as long as they last (10 s for a share of 6.25/s): a key that
   * meets a paced fleet by a denied first sighting would wait that long for
   * a share kept for it. Later denials answer a pace asked, or a wait.
   */
  askSoon(state: KeyState, now: number): void {
    if (!this.join || state.instances <= 1) return;
    state.denyUntil = Math.min(state.denyUntil, now + YOUNG_PACE_LEASE_TTLS * this.leaseTtlMs);
  }

  /** True when the key's pace should be renewed at `now` (by a call of its own, {@link renewal}). */
  renewalDue(state: KeyState, now: number): boolean {
    return (
      state.paceRate > 0 &&
      state.pending === undefined &&
      renewalDue(state.paceUntil, state.paceUntil - state.paceFrom, now)
    );
  }

  /**
   * The call that renews the key's pace at `now`: no cost, the pace asked;
   * the pace held stops now.
   */
  renewal(check: TokenBucketCheck, state: KeyState, now: number): LeaseCheck {
    const ask = leaseAsk(check, state, 0, this.clock.now(), this.leaseTtlMs);
    const pace = this.replacing(check, state, this.of(check, state), now);
    // The bucket's own tokens (its burst) come along as a lease when it has them.
    return { ...ask, cost: 0, pace };
  }

  /**
   * `pace`, asked at `now` to replace the key's pace: that one stops, and
   * `pace` tells what it was, unless it ended long enough ago for its fleet
   * set to have expired in the silence since ({@link stillHeld}): told, it
   * would read as a lost state (`scripts/lease.lua.ts`).
   */
  private replacing(
    check: TokenBucketCheck,
    state: KeyState,
    pace: PaceAsk,
    now: number,
    carry = true,
  ): PaceAsk {
    const held =
      state.paceRate > 0 && stillHeld(state.paceFrom, state.paceUntil, now)
        ? heldPace(state)
        : undefined;
    this.stop(check, state, now);
    // What is left of the lump, and what lapsed of it, goes back with the ask.
    const interval = emissionIntervalMs(check.limit);
    const lumpLeft = Math.min(state.lumpMs, state.leaseMs);
    const owed = lumpLeft + state.owedMs;
    state.leaseMs -= lumpLeft;
    state.lumpMs = 0;
    // Not carried: left owed, for a give-back of its own (`LeaseBook.ask`).
    state.owedMs = carry ? 0 : owed;
    return {
      ...pace,
      ...held,
      giveBack: (pace.giveBack ?? 0) + (carry ? owed / interval : 0),
      saved: state.paceSavedMs / interval,
    };
  }

  /** {@link apply} of the pace a lease call (`result`) answered for its `j`-th check, sent `elapsedMs` ago. */
  applyAnswer(
    check: TokenBucketCheck,
    state: KeyState,
    result: LeaseResult,
    j: number,
    now: number,
    elapsedMs: number,
  ): void {
    const rate = result.paces?.[j] ?? 0;
    const ms = result.paceMs?.[j] ?? 0;
    const lent = result.paceSavings?.[j];
    this.apply(check, state, rate, ms, now, elapsedMs, result.paceLumps?.[j], lent);
    // The bucket's own tokens a pace call took beside the pace (held already) lapse as its lump.
    this.holdAsLump(state, (result.extras[j] ?? 0) * emissionIntervalMs(check.limit), now);
  }

  /**
   * Redis answered a pace asked for `check` by a call stamped `now` that
   * took `elapsedMs`: granted (`rate` tokens per second for `ms`), its
   * tokens come due until `now + ms`, from `now` when Redis charged them from
   * that very time (`time: 'client'`), else from `now + elapsedMs` (no
   * earlier than Redis' own clock read them, whatever the latency), and the
   * `lump` of the bucket's own tokens granted with it at once; refused, the
   * key waits `ms` (until another instance's pace ends and shares may free
   * up) before asking again.
   */
  apply(
    check: TokenBucketCheck,
    state: KeyState,
    rate: number,
    ms: number,
    now: number,
    elapsedMs: number,
    lump = 0,
    lent?: number,
  ): void {
    if (!(rate > 0 && ms > 0)) {
      if (ms > 0) this.denials.holdAfterDenial(check, state, now, ms);
      return;
    }
    const key = check.key;
    state.paceRate = rate;
    state.endedPaceRate = 0;
    // Savings of the pace before carry over up to this one's cap: what Redis now counts for them.
    const interval = emissionIntervalMs(check.limit);
    state.paceLentMs = lent === undefined ? Number.POSITIVE_INFINITY : lent * interval;
    const cap = savingsCapMs(rate, check.cost, check.limit, this.leaseTtlMs, state.paceLentMs);
    if (state.paceSavedMs > cap) {
      state.leaseMs = Math.max(0, state.leaseMs - (state.paceSavedMs - cap));
      state.paceSavedMs = cap;
    }
    state.paceFrom = this.chargedFromNow ? now : now + Math.max(0, elapsedMs);
    state.paceUntil = now + ms;
    state.paceDue = 0;
    // The bucket's own tokens granted with it: a lease, spendable at once, until it lapses.
    if (lump > 0) {
      state.leaseMs += lump * interval;
      this.holdAsLump(state, lump * interval, now);
    }
    const untilOnClock = this.clock.now() + Math.max(0, ms - elapsedMs);
    state.leaseExpiresAt = Math.max(state.leaseExpiresAt, untilOnClock + this.leaseTtlMs);
    this.keys.leased.add(key);
    this.events.granted(lump + dueTokens(rate, state.paceFrom, state.paceUntil, state.paceUntil));
  }
}
