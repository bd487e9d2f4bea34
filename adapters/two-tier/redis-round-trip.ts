import { gcraPeek, type RateLimitDecision } from '../../lib/algorithms/gcra.js';
import { RateLimitStoreError, toStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  ConsumeRequest,
  ConsumeResult,
  TokenBucketCheck,
  TokenBucketRequest,
} from '../../lib/store/rate-limit-store.interface.js';
import type { LeaseCheck, LeaseResult, RedisStore } from '../redis/index.js';
import type { Fallback } from './fallback.js';
import type { GiveBackQueue } from './give-back-queue.js';
import type { KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import type { LeaseBook, Reservation } from './lease-book.js';
import { heldPace } from './pace.js';

/** The checks of one request that a Redis call decides, and the state they were classified with. */
export interface RemoteChecks {
  /** Every check's local state, by index in the request. */
  readonly states: readonly KeyState[];
  /** Indexes of the checks lacking tokens: Redis is asked for them (with a lease for hot keys). */
  readonly remote: readonly number[];
  /** Indexes of the checks this instance's leases cover: charged only if Redis admits the rest. */
  readonly leased: readonly number[];
}

/**
 * TwoTierStore's Redis side of a decision: one `RedisStore.lease` call for
 * the checks lacking tokens, the leased checks reserved meanwhile and charged
 * only if it admits (all or nothing), each asked key's view, lease and hold
 * updated from the answer, and the promise that requests waiting on those
 * keys join. A failure (or a request out of time) is recorded for the
 * fallback and rejects with {@link RateLimitStoreError}, for the module's `failMode`.
 *
 * @internal
 */
export class RedisRoundTrip {
  /** Redis calls made for decisions. */
  calls = 0;

  constructor(
    private readonly redis: RedisStore,
    private readonly keys: KeyTable,
    private readonly leases: LeaseBook,
    private readonly giveBacks: GiveBackQueue,
    private readonly fallback: Fallback,
    /** Requests whose Redis call failed: the store counts them once when the module asks to decide them locally. */
    private readonly failed: WeakSet<ConsumeRequest>,
    /** This instance's id in the fleet counts of its hot keys (`fleet-share.ts`). */
    private readonly instanceId: string,
  ) {}

  /**
   * Renews a key's pace (`pace.ts`) with a call of its own, costing nothing:
   * the request that found it due, and those after it, wait for its answer
   * as for any call in flight on the key (the pace held stops when it is sent).
   */
  renewPace(check: TokenBucketCheck, state: KeyState, now: number, requestNow: number): void {
    const ask = this.leases.paces.renewal(check, state, now);
    const sentAt = performance.now();
    const sentClock = this.leases.clockNow();
    this.calls++;
    const windowMs = this.leases.fleetWindowMs([ask], [state]);
    const answered = this.redis
      .lease({ checks: [ask], now: requestNow, fleet: { id: this.instanceId, windowMs } })
      .then(
        (result) => {
          this.fallback.succeeded();
          this.leases.rememberFleet(
            state,
            result.epochs?.[0],
            result.loads?.[0],
            ask.weight,
            result.instances?.[0] ?? 0,
            sentClock,
          );
          this.leases.takeExtra(check, state, result.extras[0] ?? 0);
          this.leases.paces.applyAnswer(check, state, result, 0, now, performance.now() - sentAt);
          this.countCarried([ask], true);
          return true;
        },
        () => {
          this.fallback.failed();
          this.countCarried([ask], false);
          return false;
        },
      );
    const settled = answered.finally(() => {
      if (state.pending === settled) state.pending = undefined;
    });
    state.pending = settled;
    state.pendingDeadline = performance.now() + this.redis.timeoutMs;
  }

  /**
   * Gives a key's pace back (the key dropped, the store closing), with the
   * tokens its lease holds: one call asking a pace of 0, which gives back the
   * part not yet due (Redis knows it) and ends the pace. The tokens held are
   * counted as given back (or lost); the part not yet due, refill to come, is not.
   */
  releasePace(key: string, state: KeyState, requestNow: number): void {
    this.calls++;
    const limit = { algorithm: 'token-bucket' as const, rate: state.rate, burst: state.burst };
    const check = { key, limit, cost: 0 };
    const held = heldPace(state);
    // Ended before its lease is taken: the key, holding nothing then, leaves the set close() visits.
    state.paceRate = 0;
    const tokens = this.keys.takeLease(key, state);
    const pace = this.leases.paces.of(check, state, 0, tokens);
    const ask: LeaseCheck = { ...check, maxExtra: 0, pace: { ...pace, ...held } };
    const windowMs = this.leases.fleetWindowMs([ask], [state]);
    const sent: Promise<unknown> = this.redis
      .lease({ checks: [ask], now: requestNow, fleet: { id: this.instanceId, windowMs } })
      .then(
        () => this.giveBacks.count(tokens, true),
        () => this.giveBacks.count(tokens, false),
      )
      .finally(() => this.releases.delete(sent));
    this.releases.add(sent);
  }

  /** Counts what the paces of `asked` carried back (`PaceAsk.giveBack`) as given back, or lost with a failed call. */
  private countCarried(asked: readonly LeaseCheck[], answered: boolean): void {
    for (const { pace } of asked)
      if (pace?.giveBack !== undefined && pace.giveBack > 0)
        this.giveBacks.count(pace.giveBack, answered);
  }

  /** Settles when every pace given back so far is answered (or failed). */
  paceReleases(): Promise<unknown> {
    return Promise.allSettled([...this.releases]);
  }

  private readonly releases = new Set<Promise<unknown>>();

  /** A request whose deadline passed (or whose key's call in flight failed): rejected, for the module's `failMode`. */
  timedOut(request: ConsumeRequest, callFailed = false): Promise<never> {
    this.failed.add(request);
    this.fallback.failed();
    const why = callFailed
      ? 'the Redis call it waited for failed'
      : `no answer from Redis within ${this.redis.timeoutMs} ms`;
    return Promise.reject(new RateLimitStoreError(`TwoTierStore: ${why}`));
  }

  /**
   * One Redis call within `timeoutMs`; `deadline` (`performance.now()` ms) is
   * recorded on the asked keys, so that requests joining this call know when
   * it gives up. `at`: `now` in the module's clock (`request.now` unless the
   * request waited, see `Decider.join`), what Redis is told.
   */
  call(
    request: TokenBucketRequest,
    now: number,
    checks: RemoteChecks,
    timeoutMs: number,
    deadline: number,
    at = request.now,
  ): Promise<ConsumeResult> {
    const { remote, leased, states: all } = checks;
    const reservations: Reservation[] = leased.map((index) =>
      this.leases.reserve(index, request.checks[index]!, all[index]!, now),
    );
    const states = remote.map((i) => all[i]!);
    const sentAt = performance.now();
    const sentClock = this.leases.clockNow();
    const asked = this.leases.ask(request.checks, remote as number[], states, now);
    // Tokens due back go first: Redis must not count them as taken when it decides.
    this.giveBacks.flush();
    this.calls++;
    const windowMs = this.leases.fleetWindowMs(asked, states);
    const call = this.redis.lease(
      windowMs > 0
        ? { checks: asked, now: at, fleet: { id: this.instanceId, windowMs } }
        : { checks: asked, now: at },
      timeoutMs,
    );
    const settle = () => {
      for (const state of states) if (state.pending === settled) state.pending = undefined;
    };
    const answered = call.then(
      (result) => {
        settle();
        // A write reached Redis: towards the end of a fallback.
        this.fallback.succeeded();
        this.countCarried(asked, true);
        return this.applyAnswer(
          request,
          now,
          remote,
          states,
          reservations,
          result,
          asked,
          sentAt,
          sentClock,
        );
      },
      (error: unknown) => {
        settle();
        for (let r = reservations.length - 1; r >= 0; r--) this.leases.unreserve(reservations[r]!);
        this.countCarried(asked, false);
        this.failed.add(request);
        this.fallback.failed();
        throw toStoreError(error, 'TwoTierStore: Redis failed');
      },
    );
    // What requests waiting on this key await: never rejects.
    const settled: Promise<boolean> = answered.then(yes, no);
    for (const state of states) {
      state.pending = settled;
      state.pendingDeadline = deadline;
    }
    return answered;
  }

  /**
   * A request whose keys this instance has not seen within `leaseTtlMs`
   * (`KeyTable.firstSighting`): exactly `RedisStore.consume`, one script call
   * (no lease: a first request asks none), and no local state unless Redis
   * denies. Then each key gets its state, with the denial cached as after
   * {@link call}, unless a later request made one meanwhile (its own call
   * answers for it). A failure (always a `RateLimitStoreError`) is recorded
   * as {@link call} records it.
   */
  firstSighting(request: TokenBucketRequest, now: number): Promise<ConsumeResult> {
    // Tokens due back go first: a key dropped with its lease may come back as a first sighting.
    this.giveBacks.flush();
    this.calls++;
    const join = this.leases.joinAsk(request.checks);
    if (join !== undefined) return this.firstSightingJoin(request, now, join);
    const answer = this.redis.consume(request);
    // Watched rather than chained: the caller awaits RedisStore's own promise, one promise
    // resolution fewer per decision, and these reactions, registered first, run before the caller's.
    answer.then(
      (result) => {
        this.fallback.succeeded();
        if (!result.allowed) this.rememberDenial(request, now, result);
      },
      () => {
        this.failed.add(request);
        this.fallback.failed();
      },
    );
    return answer;
  }

  /**
   * A first sighting where instances share the buckets: one lease call that
   * charges the cost and takes a lease only for buckets other instances lease
   * already (`joinExtra`). Keys granted one, or denied, get their state as
   * after {@link call}; the others none, as after a plain consume.
   */
  private firstSightingJoin(
    request: TokenBucketRequest,
    now: number,
    asked: LeaseCheck[],
  ): Promise<ConsumeResult> {
    const { checks } = request;
    const windowMs = this.leases.fleetWindowMs(asked, []);
    const sentClock = this.leases.clockNow();
    return this.redis
      .lease({ checks: asked, now: request.now, fleet: { id: this.instanceId, windowMs } })
      .then(
        (result) => {
          this.fallback.succeeded();
          if (result.allowed && !result.extras.some((extra) => extra > 0))
            return { allowed: true, decisions: result.decisions };
          const remote = checks.map((_, i) => i);
          const states = checks.map((check) => this.keys.stateOf(check, now));
          const answer = this.applyAnswer(
            request,
            now,
            remote,
            states,
            [],
            result,
            asked,
            0,
            sentClock,
          );
          if (!result.allowed) for (const state of states) this.leases.paces.askSoon(state, now);
          return answer;
        },
        (error: unknown) => {
          this.failed.add(request);
          this.fallback.failed();
          throw toStoreError(error, 'TwoTierStore: Redis failed');
        },
      );
  }

  /** A first sighting denied: its keys' views, and holds as {@link LeaseBook.settle} sets them after a denial. */
  private rememberDenial(request: TokenBucketRequest, now: number, result: ConsumeResult): void {
    const { checks } = request;
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      if (this.keys.get(check.key) !== undefined) continue;
      this.leases.settle(
        check,
        this.keys.stateOf(check, now),
        result.decisions[i]!,
        0,
        false,
        now,
        0,
      );
    }
  }

  /** Redis answered: each asked key's view, lease and hold updated; the request's decisions. */
  private applyAnswer(
    request: TokenBucketRequest,
    now: number,
    remote: readonly number[],
    states: KeyState[],
    reservations: Reservation[],
    result: LeaseResult,
    asked: readonly LeaseCheck[],
    sentAt = 0,
    sentClock?: number,
  ): ConsumeResult {
    const { checks } = request;
    const decisions: RateLimitDecision[] = new Array(checks.length);
    const { allowed } = result;
    remote.forEach((index, j) => {
      const check = checks[index]!;
      const state = this.keys.answered(check.key, states[j]!, now);
      const extra = result.extras[j] ?? 0;
      const { maxExtra, joinExtra = 0, weight } = asked[j]!;
      const instances = result.instances?.[j] ?? 0;
      this.leases.rememberFleet(
        state,
        result.epochs?.[j],
        result.loads?.[j],
        weight,
        instances,
        sentClock,
      );
      decisions[index] = this.leases.settle(
        check,
        state,
        result.decisions[j]!,
        extra,
        allowed,
        now,
        // A join granted, or denied, was asked for as much as a lease.
        joinExtra > maxExtra && (extra > 0 || !allowed) ? joinExtra : maxExtra,
        instances,
      );
      if (asked[j]!.pace !== undefined)
        this.leases.paces.applyAnswer(check, state, result, j, now, performance.now() - sentAt);
    });
    if (allowed) {
      for (const reservation of reservations)
        decisions[reservation.index] = reservation.outcome.decision;
    } else {
      for (let r = reservations.length - 1; r >= 0; r--) {
        const reservation = reservations[r]!;
        this.leases.unreserve(reservation);
        decisions[reservation.index] = gcraPeek(
          reservation.state.shadowTat,
          now,
          checks[reservation.index]!.limit,
        );
      }
    }
    return { allowed, decisions };
  }
}

function yes(): boolean {
  return true;
}
function no(): boolean {
  return false;
}

/**
 * The Redis calls already in flight for the keys of `remote` (their
 * `pending` answers), and whether one of them gives up later than
 * `deadline`; `undefined` when none is.
 */
export function callsInFlight(
  remote: readonly number[],
  states: readonly KeyState[],
  deadline: number,
): { readonly pending: Promise<boolean>[]; readonly later: boolean } | undefined {
  let pending: Promise<boolean>[] | undefined;
  let later = false;
  for (const i of remote) {
    const state = states[i]!;
    const wait = state.pending;
    if (wait === undefined) continue;
    (pending ??= []).push(wait);
    if (state.pendingDeadline > deadline) later = true;
  }
  return pending === undefined ? undefined : { pending, later };
}
