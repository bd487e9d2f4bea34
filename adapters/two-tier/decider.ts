import { gcraPeek, type RateLimitDecision } from '../../lib/algorithms/gcra.js';
import type {
  ConsumeResult,
  MaybePromise,
  TokenBucketRequest,
} from '../../lib/store/rate-limit-store.interface.js';
import type { RelativeTime } from '../../lib/store/relative-time.js';
import type { DenyCache } from './deny-cache.js';
import type { Fallback } from './fallback.js';
import type { KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import type { LeaseBook } from './lease-book.js';
import { callsInFlight, type RedisRoundTrip } from './redis-round-trip.js';
import { localDecision, sortChecks } from './local-decision.js';

/** Waits for another request's Redis call on the same key before calling Redis anyway. */
export const MAX_WAITS = 2;
/** Remaining time (ms) under which a request does not start a Redis call of its own: it has timed out. */
const MIN_CALL_MS = 1;

/**
 * TwoTierStore's decision of a token-bucket request: from its leases and
 * cached denials when they settle it (a synchronous answer), else one Redis
 * call ({@link RedisRoundTrip}), joining the calls already in flight for its
 * keys, within one deadline per request; or from the local fallback while
 * Redis fails.
 *
 * @internal
 */
export class Decider {
  /** Decisions answered without Redis (leases, cached denials, the fallback). */
  localCount = 0;

  constructor(
    private readonly keys: KeyTable,
    private readonly leases: LeaseBook,
    private readonly denials: DenyCache,
    private readonly roundTrip: RedisRoundTrip,
    private readonly fallback: Fallback,
    /** The RedisStore's `timeoutMs`: each request's whole budget, however many calls it waits on. */
    private readonly timeoutMs: number,
    /** The store's frame: the newest `now` it has seen dates a request decided after a wait. */
    private readonly time: RelativeTime,
  ) {}

  /**
   * Decide from local state when possible (synchronous answer), else with one
   * Redis call. `waits`: how many times this request already waited for
   * another request's call on the same key. `deadline` (`performance.now()`
   * ms, 0 until the request first waits or calls): one per request, `timeoutMs`
   * after that moment, however many calls it waits on; past it, the request
   * rejects and the module applies its `failMode`. `at`: `now` in the module's
   * clock, what a Redis call is sent with (`request.now` unless a wait moved it).
   */
  decide(
    request: TokenBucketRequest,
    now: number,
    waits: number,
    deadline: number,
    local = false,
    at = request.now,
  ): MaybePromise<ConsumeResult> {
    const { checks } = request;
    const count = checks.length;
    if (count === 0) return { allowed: true, decisions: [] };
    const { leases } = this;
    const { states, leased, remote, denied, denyHit } = sortChecks(
      checks,
      now,
      this.keys,
      leases,
      this.denials,
    );

    if (denied) {
      if (denyHit) this.denials.hits++;
      this.localCount++;
      return {
        allowed: false,
        decisions: checks.map((check, i) =>
          localDecision(check, states[i]!, now, leases, this.denials),
        ),
      };
    }
    if (remote === undefined) {
      this.localCount++;
      const decisions: RateLimitDecision[] = new Array(count);
      for (let i = 0; i < count; i++)
        decisions[i] = leases.spend(checks[i]!, states[i]!, now).decision;
      return { allowed: true, decisions };
    }
    if (local) return this.decideLocally(request, now, states, remote, leased ?? []);

    if (deadline === 0) deadline = performance.now() + this.timeoutMs;
    if (waits < MAX_WAITS) {
      // Another request is already asking Redis for this key: its answer
      // (a lease, a denial) probably decides this one too, without a call.
      const inFlight = callsInFlight(remote, states, deadline);
      if (inFlight)
        return this.join(request, now, at, waits, deadline, inFlight.pending, inFlight.later);
    }
    const left = deadline - performance.now();
    if (left < MIN_CALL_MS) return this.roundTrip.timedOut(request);
    return this.roundTrip.call(
      request,
      now,
      { states, remote, leased: leased ?? [] },
      left,
      deadline,
      at,
    );
  }

  /**
   * Waits for the Redis calls in flight for some of `request`'s keys, then
   * decides again; within the request's own deadline: a call that gives up
   * later than it is not waited for past it (`later`), and a call that
   * failed fails the requests waiting on it too (Redis just failed for their
   * key: the module decides them by its `failMode` at once).
   *
   * Decided again no earlier than the newest `now` the store has seen: the
   * answer may come long after the request arrived (a stalled event loop, a
   * slow Redis), and requests that arrived meanwhile may have spent the
   * key's new lease already, moving its view (`shadowTat`) to their own,
   * later `now`; read from the request's arrival, that view would count the
   * wait as debt, and a wait longer than the burst's refill time would deny
   * it with the bucket nearly full. (Redis, on its own `TIME`, decides a late
   * request at its execution just as well.)
   */
  private join(
    request: TokenBucketRequest,
    now: number,
    at: number,
    waits: number,
    deadline: number,
    pending: Promise<boolean>[],
    later: boolean,
  ): Promise<ConsumeResult> {
    let answers: Promise<boolean[] | undefined> = Promise.all(pending);
    if (later) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - performance.now()));
      });
      answers = Promise.race([answers, expired]).finally(() => clearTimeout(timer));
    }
    return answers.then((ok) => {
      if (ok === undefined || ok.includes(false))
        return this.roundTrip.timedOut(request, ok !== undefined);
      const latest = this.time.lastNow;
      if (latest <= at) return this.decide(request, now, waits + 1, deadline, false, at);
      return this.decide(request, this.time.relative(latest), waits + 1, deadline, false, latest);
    });
  }

  /** Redis is failing: the local fallback decides for the checks lacking a lease. */
  private decideLocally(
    request: TokenBucketRequest,
    now: number,
    states: KeyState[],
    remote: number[],
    leased: number[],
  ): ConsumeResult {
    const { checks } = request;
    this.localCount++;
    const answer = this.fallback.consume(checks, remote, request.now);
    const decisions: RateLimitDecision[] = new Array(checks.length);
    remote.forEach((index, j) => (decisions[index] = answer.decisions[j]!));
    for (const index of leased) {
      const check = checks[index]!;
      const state = states[index]!;
      decisions[index] = answer.allowed
        ? this.leases.spend(check, state, now).decision
        : gcraPeek(state.shadowTat, now, check.limit);
    }
    return { allowed: answer.allowed, decisions };
  }
}
