import type { HeaderLimit } from '../headers/rate-limit-headers.js';
import type { FailMode, RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import type { Identify } from '../keys/key-strategy.js';
import { describeValue, optionError } from '../errors/option-error.js';
import { rejectUnknownOptions } from '../errors/unknown-options.js';
import { integerOption } from '../limits/integer-option.js';
import { parseDuration } from '../limits/parse-duration.js';
import { checkLimitName, resolveCommonOptions } from '../limits/common-limit-options.js';
import { LIMIT_OPTIONS, type LimitContext } from '../limits/resolve-limit.js';
import { LIMIT_POLICIES } from '../policies/limit-policies.js';
import { DEFAULT_LIMIT_NAME } from '../rate-limit.constants.js';
import {
  resolveAdaptiveConcurrency,
  type ResolvedAdaptiveConcurrency,
} from './adaptive/resolve-adaptive-concurrency.js';
import type { TokenBucketLimit } from '../store/rate-limit-store.interface.js';

/** A `concurrency` limit's slots are held at most this long by default: 5 minutes. */
export const DEFAULT_LEASE_TIMEOUT_MS = 300_000;
/** The longest `leaseTimeout`: one day (a slot held longer is a leak, not a request). */
export const MAX_LEASE_TIMEOUT_MS = 86_400_000;
/** The most slots one key may have: far beyond what one process can serve, small enough for any store. */
export const MAX_CONCURRENCY = 1_000_000;

/**
 * The options of a rate limit that a concurrency limit has no use for: each
 * refused with why, rather than ignored (a `rate` beside `concurrency` would
 * otherwise look enforced). The bucket's own here; each policy says why for its own.
 */
const RATE_ONLY: Readonly<Partial<Record<keyof RateLimitOptions, string>>> = {
  rate: 'a limit is a rate limit or a concurrency limit: declare a second limit (another name) for the rate',
  burst: 'is a rate-limit option; a concurrency limit has no bucket',
  cost: 'is a rate-limit option; a request holds one slot',
  algorithm:
    'is a rate-limit option; a concurrency limit counts requests in flight, not per window',
  calendar:
    'is a rate-limit option (calendar-aligned fixed windows); a concurrency limit has no window',
  ...Object.assign({}, ...LIMIT_POLICIES.map((policy) => policy.refusedOnConcurrency)),
};

/**
 * A `concurrency` limit after start-up validation.
 *
 * @internal
 */
export interface ResolvedConcurrencyLimit {
  readonly name: string;
  /** Slots one key may hold at once (an adaptive limit: its `max`). */
  readonly concurrency: number;
  /** The adaptive form: counted in this process, its limit moving (undefined: static, in the store). */
  readonly adaptive: ResolvedAdaptiveConcurrency | undefined;
  /** `leaseTimeout` in whole milliseconds. */
  readonly leaseMs: number;
  readonly identify: Identify;
  /** Prefix of every slot key of this limit: name and route (unless shared). */
  readonly namespace: string;
  readonly failMode: FailMode | undefined;
  /** What the headers say of it: `q` = the slots, `qu="concurrent-requests"`. */
  readonly header: HeaderLimit;
  /**
   * The bucket shape decision-channel subscribers read beside a key: rate
   * and burst both the slot count (nothing refills; it is what `q` says).
   */
  readonly shape: TokenBucketLimit;
}

/** Whether a declared limit is a concurrency limit (it says `concurrency`). */
export function isConcurrencyLimit(options: RateLimitOptions | undefined): boolean {
  return options !== null && typeof options === 'object' && options.concurrency !== undefined;
}

/**
 * Validate one declared `concurrency` limit. Throws a TypeError naming the
 * place, the limit and the option.
 */
export function resolveConcurrencyLimit(
  options: RateLimitOptions,
  context: LimitContext,
): ResolvedConcurrencyLimit {
  const name = options.name ?? DEFAULT_LIMIT_NAME;
  const where = `RateLimit: ${context.where}, limit "${name}"`;
  const fail = (option: string, problem: string): never => {
    throw optionError(where, option, problem);
  };
  rejectUnknownOptions(where, options, LIMIT_OPTIONS);
  checkLimitName(name, fail);
  for (const [option, why] of Object.entries(RATE_ONLY)) {
    if ((options as Record<string, unknown>)[option] !== undefined)
      fail(option, `cannot be combined with concurrency: ${why}`);
  }
  const adaptive =
    typeof options.concurrency === 'object'
      ? resolveAdaptiveConcurrency(options.concurrency, where, fail)
      : undefined;
  const concurrency = integerOption(
    adaptive?.config.controller.max ?? options.concurrency,
    'concurrency',
    1,
    MAX_CONCURRENCY,
    fail,
    `a positive integer (at most ${MAX_CONCURRENCY})`,
  );
  // Counted in the process: any store will do, and no store failure can happen to it.
  if (adaptive === undefined && context.storeSlots === false) {
    fail(
      'concurrency',
      'needs a store with concurrency slots (RateLimitStore.slots: MemoryStore, RedisStore, TwoTierStore); this one has none',
    );
  }
  if (adaptive !== undefined && options.failMode !== undefined) {
    fail(
      'failMode',
      'does not apply to an adaptive concurrency limit: it is counted in each process, never in the store, so no store failure reaches it',
    );
  }
  const leaseMs = resolveLeaseTimeout(options.leaseTimeout, fail);
  // In-flight requests are not a decision that can be replayed without effect: no shadow mode.
  if ((options.shadow ?? context.shadow ?? false) !== false) {
    fail(
      'shadow',
      `is not supported on a concurrency limit${options.shadow === undefined ? " (the module's shadow is on: set shadow: false on this limit)" : ''}`,
    );
  }
  const { identify, route, failMode } = resolveCommonOptions(options, name, context, fail);
  return {
    name,
    concurrency,
    adaptive,
    leaseMs,
    identify,
    namespace: `cc|${name}|${route}|`,
    failMode,
    header: Object.freeze({
      name,
      rate: concurrency,
      burst: concurrency,
      unit: 'concurrent-requests',
    }),
    shape: Object.freeze({
      algorithm: 'token-bucket',
      rate: concurrency,
      burst: concurrency,
    }),
  };
}

function resolveLeaseTimeout(
  value: unknown,
  fail: (option: string, problem: string) => never,
): number {
  if (value === undefined) return DEFAULT_LEASE_TIMEOUT_MS;
  const ms = parseDuration(value);
  if (ms === undefined || ms > MAX_LEASE_TIMEOUT_MS) {
    fail(
      'leaseTimeout',
      `must be a positive number of milliseconds or a duration such as '30s' or '5min', at most one day, got ${describeValue(value)}`,
    );
  }
  return Math.ceil(ms!);
}
