import { describeValue, optionError } from '../../lib/errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../../lib/errors/unknown-options.js';
import { RedisStore, type RedisClient, type RedisStoreOptions } from '../redis/index.js';

/**
 * Options of `TwoTierStore`. Give either `client` (the store then builds
 * its own {@link RedisStore} with the Redis options below) or `redis` (an
 * existing RedisStore, which `close()` leaves open).
 */
export interface TwoTierStoreOptions extends Partial<Omit<RedisStoreOptions, 'client'>> {
  /** The Redis connection (an ioredis `Redis` or `Cluster`, or any {@link RedisClient}). Never closed by the store. */
  readonly client?: RedisClient;
  /**
   * An existing RedisStore to put the local tier in front of, instead of
   * `client`. Its own options (prefix, timeout, time) apply; do not combine
   * with the Redis options here.
   */
  readonly redis?: RedisStore;
  /**
   * How many application instances share the Redis buckets. The default of
   * {@link localShare}: during a Redis outage each instance enforces
   * `1 / instances` of every limit on its own. Above 1, a key's first
   * Redis call also asks to join the fleet: it comes back with a small
   * lease when other instances lease its bucket already (`docs/fleet.md`).
   * A hot key's first paces expect this many instances: configured above
   * the instances that run, a fleet's start under-admits by the missing
   * ones' shares until those paces end.
   * @default 1
   */
  readonly instances?: number;
  /**
   * Share (0 < share <= 1) of each limit's rate and burst that this instance
   * enforces on its own while Redis is unreachable, for requests whose
   * `failMode` is `'local'`. Fractions are kept: a local burst under a
   * request's cost admits it once the key could have filled up to the cost
   * since the fallback began.
   * @default 1 / instances
   */
  readonly localShare?: number;
  /**
   * Longest time leased tokens are held locally, in milliseconds of the
   * store's `clock`. Tokens not spent by then are given back to Redis. Also
   * the window over which the store measures a key's local demand.
   * @default 1000
   */
  readonly leaseTtlMs?: number;
  /**
   * Largest lease, as a share of the bucket's burst (0 disables leases: every
   * decision is one Redis call, and only the deny cache saves calls). A
   * lease is sized from the key's demand on this instance (half a
   * `leaseTtlMs` of it) and capped by `floor(maxLeaseShare x burst)`.
   * @default 0.25
   */
  readonly maxLeaseShare?: number;
  /**
   * Hard cap on the keys the local tier tracks (leases, cached denials,
   * demand). Past it, the least recently used key is dropped (its lease given
   * back): it only costs that key Redis calls again.
   *
   * Lower than `MemoryStore`'s `maxKeys` (1,000,000) on purpose: Redis holds
   * every bucket, so this is a cache of the keys worth keeping local (hot
   * ones), whose eviction costs calls, never a limit; each key is an object
   * of its own (lease, demand, deny cache), several times a `MemoryStore`
   * bucket. (The local fallback, used while Redis is down, is a `MemoryStore`
   * with its own default.)
   * @default 100_000
   */
  readonly maxKeys?: number;
  /**
   * How often, in milliseconds, Redis is probed while the store runs on its
   * local fallback. A probe is a write (a token of a probe key); two
   * successful writes in a row end the fallback.
   * @default 1000
   */
  readonly probeIntervalMs?: number;
  /**
   * Clock for lease expiry (milliseconds). Decisions use each request's
   * `now`, like every store; leases are timed by this clock because they
   * also expire when no request comes. Tests inject a manual one.
   * @default performance.now()
   */
  readonly clock?: { now(): number };
}

/** {@link TwoTierStoreOptions} checked, with their defaults applied. @internal */
export interface TwoTierSettings {
  readonly redis: RedisStore;
  /** True when the store built its RedisStore (and closes it). */
  readonly ownsRedis: boolean;
  readonly localShare: number;
  /** The `instances` option (1 when not given). */
  readonly instances: number;
  readonly leaseTtlMs: number;
  readonly maxLeaseShare: number;
  readonly maxKeys: number;
  readonly probeIntervalMs: number;
  readonly clock: { now(): number };
}

const WHERE = 'TwoTierStore';

/**
 * Every option of `TwoTierStore`, the Redis ones it passes on included:
 * checked here, so that a misspelt one is reported as the TwoTierStore's.
 */
const TWO_TIER_OPTIONS = optionNames<TwoTierStoreOptions>({
  client: true,
  redis: true,
  instances: true,
  localShare: true,
  leaseTtlMs: true,
  maxLeaseShare: true,
  maxKeys: true,
  probeIntervalMs: true,
  clock: true,
  keyPrefix: true,
  timeoutMs: true,
  time: true,
  cluster: true,
  expiryPaddingMs: true,
});
const defaultClock = { now: () => performance.now() };

/**
 * Checks the options (throwing a `TypeError` that names the option, see
 * `optionError`) and applies the defaults. With `client`, builds the
 * RedisStore (which checks the Redis options).
 *
 * @internal
 */
export function resolveTwoTierOptions(options: TwoTierStoreOptions): TwoTierSettings {
  if (!options || typeof options !== 'object')
    throw optionError(WHERE, 'options', 'must be an object with client or redis');
  rejectUnknownOptions(WHERE, options, TWO_TIER_OPTIONS);
  const {
    client,
    redis: given,
    instances,
    localShare,
    leaseTtlMs,
    maxLeaseShare,
    maxKeys,
    probeIntervalMs,
    clock,
    ...redisOptions
  } = options;
  let redis: RedisStore;
  if (given !== undefined) {
    if (!(given instanceof RedisStore)) throw optionError(WHERE, 'redis', 'must be a RedisStore');
    if (client !== undefined)
      throw optionError(
        WHERE,
        'client',
        'cannot be combined with redis: give either client or redis, not both',
      );
    const extra = Object.keys(redisOptions).filter(
      (name) => (redisOptions as Record<string, unknown>)[name] !== undefined,
    );
    if (extra.length > 0)
      throw optionError(
        WHERE,
        extra.join(', '),
        'cannot be combined with redis (set them on the RedisStore)',
      );
    redis = given;
  } else {
    if (client === undefined)
      throw optionError(WHERE, 'client (a Redis client) or redis (a RedisStore)', 'is required');
    redis = new RedisStore({ ...redisOptions, client });
  }

  const count = instances ?? 1;
  if (!Number.isSafeInteger(count) || count < 1) {
    throw optionError(
      WHERE,
      'instances',
      `must be a positive integer, got ${describeValue(instances)}`,
    );
  }
  const share = localShare ?? 1 / count;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) {
    throw optionError(
      WHERE,
      'localShare',
      `must be a number in (0, 1], got ${describeValue(localShare)}`,
    );
  }
  const leaseTtl = milliseconds('leaseTtlMs', leaseTtlMs, 1000);
  const probeInterval = milliseconds('probeIntervalMs', probeIntervalMs, 1000);
  const leaseShare = maxLeaseShare ?? 0.25;
  if (typeof leaseShare !== 'number' || !(leaseShare >= 0 && leaseShare <= 1)) {
    throw optionError(
      WHERE,
      'maxLeaseShare',
      `must be a number in [0, 1], got ${describeValue(maxLeaseShare)}`,
    );
  }
  const keys = maxKeys ?? 100_000;
  if (!Number.isSafeInteger(keys) || keys < 1) {
    throw optionError(
      WHERE,
      'maxKeys',
      `must be a positive integer, got ${describeValue(maxKeys)}`,
    );
  }
  if (clock !== undefined && typeof clock?.now !== 'function')
    throw optionError(WHERE, 'clock', 'must have a now() method');
  return {
    redis,
    ownsRedis: given === undefined,
    localShare: share,
    instances: count,
    leaseTtlMs: leaseTtl,
    maxLeaseShare: leaseShare,
    maxKeys: keys,
    probeIntervalMs: probeInterval,
    clock: clock ?? defaultClock,
  };
}

/** A positive number of milliseconds a timer can take (at most 2^31 - 1), or `fallback` when not given. */
function milliseconds(name: string, value: number | undefined, fallback: number): number {
  const result = value ?? fallback;
  if (
    typeof result !== 'number' ||
    !Number.isFinite(result) ||
    result <= 0 ||
    result > 2_147_483_647
  ) {
    throw optionError(
      WHERE,
      name,
      `must be a positive number of milliseconds, got ${describeValue(value)}`,
    );
  }
  return result;
}
