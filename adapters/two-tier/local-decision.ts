import { gcraConsume, gcraPeek, type RateLimitDecision } from '../../lib/algorithms/gcra.js';
import { TOKEN_EPSILON } from '../../lib/algorithms/token-epsilon.js';
import {
  isWindowLimit,
  type BucketRef,
  type TokenBucketCheck,
  type TokenBucketLimit,
} from '../../lib/store/rate-limit-store.interface.js';
import type { DenyCache } from './deny-cache.js';
import { holds, type KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import type { LeaseBook } from './lease-book.js';

/** How the checks of one request can be decided, as {@link sortChecks} finds them. */
export interface SortedChecks {
  /** Each check's key state, in request order. */
  readonly states: KeyState[];
  /** Checks their lease covers (and their bucket admits): decided here. `undefined` for none (no array made). */
  readonly leased: number[] | undefined;
  /** Checks that need Redis; `undefined` for none. */
  readonly remote: number[] | undefined;
  /** Some check denies without Redis: its cost is above the burst, its bucket or its cached denial refuses. */
  readonly denied: boolean;
  /** A cached denial was among the refusals (counted once per request). */
  readonly denyHit: boolean;
}

/**
 * Sorts a request's checks by what can decide them: the key's lease, its
 * cached denial, or Redis. A lease that holds the tokens still needs the
 * bucket itself to admit (a limit that shrank, a clock that went back).
 */
export function sortChecks(
  checks: readonly TokenBucketCheck[],
  now: number,
  keys: KeyTable,
  leases: LeaseBook,
  denials: DenyCache,
): SortedChecks {
  const states: KeyState[] = new Array(checks.length);
  let leased: number[] | undefined;
  let remote: number[] | undefined;
  let denied = false;
  let denyHit = false;
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    const state = (states[i] = keys.stateOf(check, now));
    if (check.cost > check.limit.burst + TOKEN_EPSILON) {
      denied = true;
    } else if (leases.covers(check, state, now)) {
      if (gcraConsume(state.shadowTat, now, check.limit, check.cost).decision.allowed)
        (leased ??= []).push(i);
      else denied = true;
    } else if (leases.paces.hold(check, state, now) || denials.active(check, state, now)) {
      denied = true;
      denyHit = true;
    } else {
      (remote ??= []).push(i);
    }
  }
  return { states, leased, remote, denied, denyHit };
}

/**
 * What `check` reports in a request denied locally, which charged nothing:
 * its cached denial if it is held, else its bucket as this instance sees
 * it (a peek, had it admitted).
 */
export function localDecision(
  check: TokenBucketCheck,
  state: KeyState,
  now: number,
  leases: LeaseBook,
  denials: DenyCache,
): RateLimitDecision {
  const held =
    check.cost <= check.limit.burst + TOKEN_EPSILON &&
    !leases.covers(check, state, now) &&
    denials.active(check, state, now);
  if (held) return denials.decision(check, state, now);
  const { decision } = gcraConsume(state.shadowTat, now, check.limit, check.cost);
  return decision.allowed ? gcraPeek(state.shadowTat, now, check.limit) : decision;
}

/**
 * Before a refund or a block reaches Redis: each token-bucket key held here
 * gives its lease back first (same connection, sent before the change: a
 * refund that fills the bucket must not leave a lease to spend on top of
 * it, a block must find it empty), takes `nextTat` as its view, and loses its
 * cached denial. Keys not held and window checks have no view to change.
 */
export function changeViews<C extends BucketRef>(
  checks: readonly C[],
  keys: KeyTable,
  denials: DenyCache,
  nextTat: (state: KeyState, check: C & { readonly limit: TokenBucketLimit }) => number | undefined,
): void {
  for (const check of checks) {
    const state = keys.get(check.key);
    if (state === undefined || isWindowLimit(check.limit)) continue;
    if (holds(state)) keys.release(check.key, state);
    state.shadowTat = nextTat(state, check as C & { readonly limit: TokenBucketLimit });
    denials.clear(state);
  }
}

/**
 * A bucket as Redis reported it (`decision`, from a peek), as this instance
 * reports it: without its lease (`state`: the key's, if held here), and no
 * fuller than its own view.
 */
export function withoutLease(
  decision: RateLimitDecision,
  state: KeyState | undefined,
  limit: TokenBucketLimit,
  now: number,
): RateLimitDecision {
  if (!state || (state.leaseMs <= 0 && state.shadowTat === undefined)) return decision;
  // Redis counts this instance's lease as taken, and counts the tokens it
  // spent from its lease as taken when leased, earlier: report the bucket
  // without the lease, and no fuller than this instance's own view of it
  // (charged when spent).
  const redisTat = now + decision.resetMs - state.leaseMs;
  const tat =
    state.shadowTat === undefined || state.shadowTat < redisTat ? redisTat : state.shadowTat;
  return gcraPeek(tat, now, limit);
}
