import { describeValue, optionError } from '../../lib/errors/option-error.js';
import { MAX_HORIZON_MS } from '../../lib/store/horizon.js';
import { optionNames, rejectUnknownOptions } from '../../lib/errors/unknown-options.js';
import type { RedisClient } from './redis-client.interface.js';
import { checkKeyPrefix } from './redis-keys.js';

/** Options of `RedisStore`. */
export interface RedisStoreOptions {
  /**
   * The Redis connection: an ioredis `Redis` or `Cluster`, or any object
   * implementing {@link RedisClient}. The store never closes it.
   *
   * Recommended ioredis options for a rate limiter:
   * `enableOfflineQueue: false` (a command issued while disconnected fails
   * at once instead of waiting to be replayed after the reconnect, charging
   * the bucket again for a request long answered), `maxRetriesPerRequest: 1`
   * and `autoResendUnfulfilledCommands: false` (same reason for commands in
   * flight when the connection drops). The store also fails fast on its own
   * whenever the client's `status` is neither `'ready'` nor `'wait'` (lazy,
   * connects on first use), so even with ioredis defaults nothing it sends
   * sits in an offline queue.
   */
  readonly client: RedisClient;
  /**
   * Prepended to every Redis key; no braces (the store sets the Cluster hash
   * tag itself), at most 100 characters. Prefer it to ioredis' own
   * `keyPrefix`, which the store cannot see: braces there would move every
   * bucket into one Cluster slot.
   * @default 'holdup:'
   */
  readonly keyPrefix?: string;
  /**
   * Longest wait for Redis per decision, in milliseconds. A decision not
   * answered in time rejects with `RateLimitStoreError` (resolved by the
   * module's `failMode`); the late reply, if any, is ignored. A reply already
   * received when the timer fires (the event loop was busy) still wins.
   * @default 100
   */
  readonly timeoutMs?: number;
  /**
   * Whose clock decides. `'server'`: Redis `TIME`, so application instances
   * whose clocks disagree still share exact buckets. `'client'`: the `now` of
   * each request (the module clock), for deterministic tests and simulations.
   * @default 'server'
   */
  readonly time?: 'server' | 'client';
  /**
   * Group checks by Cluster slot (see `RedisStore`). Defaults to the
   * client's `isCluster` (true for an ioredis `Cluster`); set it for a proxy
   * that enforces slots on a client that does not say so.
   */
  readonly cluster?: boolean;
  /**
   * Extra lifetime of keys beyond the moment their bucket is full again, in
   * milliseconds. A test seam: it never changes a decision (a key past its
   * time reads as a full bucket), only memory. Tests driving
   * `time: 'client'` with a virtual clock that stands still while real time
   * passes set it so keys do not expire in Redis before the virtual clock
   * reaches their time. Leave it at 0 in production.
   * @default 0
   * @internal
   */
  readonly expiryPaddingMs?: number;
}

/**
 * Default {@link RedisStoreOptions.timeoutMs}: 100 ms.
 *
 * A healthy Redis answers these scripts in well under a millisecond plus the
 * network round trip (sub-millisecond in one data centre, a few ms across
 * zones), so 100 ms is one to two orders of magnitude above normal, which
 * absorbs event-loop stalls and GC pauses of a busy Node process without false
 * alarms. It is also short enough that, when Redis is hung or failing over,
 * each request waits at most a tenth of a second before `failMode` decides,
 * instead of piling up behind a dead connection.
 */
export const DEFAULT_REDIS_TIMEOUT_MS = 100;

/** {@link RedisStoreOptions}, validated, defaults applied. */
export interface ResolvedRedisStoreOptions {
  readonly client: RedisClient;
  readonly keyPrefix: string;
  readonly timeoutMs: number;
  /** `time: 'client'`. */
  readonly clientTime: boolean;
  readonly cluster: boolean;
  /** `expiryPaddingMs`, as the scripts take it. */
  readonly paddingArg: string;
}

const STORE = 'RedisStore';

/** Every option of `RedisStore`, `@internal` ones included. */
const REDIS_STORE_OPTIONS = optionNames<RedisStoreOptions>({
  client: true,
  keyPrefix: true,
  timeoutMs: true,
  time: true,
  cluster: true,
  expiryPaddingMs: true,
});

/** Validates `options` (at start-up: a `TypeError` naming the option) and applies the defaults. */
export function resolveRedisStoreOptions(options: RedisStoreOptions): ResolvedRedisStoreOptions {
  rejectUnknownOptions(STORE, options, REDIS_STORE_OPTIONS);
  const client = options?.client as Partial<RedisClient> | undefined;
  if (
    !client ||
    typeof client.evalsha !== 'function' ||
    typeof client.eval !== 'function' ||
    typeof client.del !== 'function'
  ) {
    throw optionError(
      STORE,
      'client',
      'must be a Redis client with evalsha, eval and del (e.g. an ioredis Redis or Cluster)',
    );
  }
  const keyPrefix = checkKeyPrefix(options.keyPrefix ?? 'holdup:');

  const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isFinite(timeoutMs) ||
    timeoutMs <= 0 ||
    timeoutMs > 2_147_483_647
  ) {
    throw optionError(
      STORE,
      'timeoutMs',
      `must be a positive number of milliseconds, got ${describeValue(options.timeoutMs)}`,
    );
  }

  const time = options.time ?? 'server';
  if (time !== 'server' && time !== 'client') {
    throw optionError(
      STORE,
      'time',
      `must be 'server' or 'client', got ${describeValue(options.time)}`,
    );
  }

  if (options.cluster !== undefined && typeof options.cluster !== 'boolean') {
    throw optionError(STORE, 'cluster', `must be a boolean, got ${describeValue(options.cluster)}`);
  }

  const padding = options.expiryPaddingMs ?? 0;
  if (
    typeof padding !== 'number' ||
    !Number.isFinite(padding) ||
    padding < 0 ||
    padding > MAX_HORIZON_MS
  ) {
    throw optionError(
      STORE,
      'expiryPaddingMs',
      `must be a number in [0, ${MAX_HORIZON_MS}], got ${describeValue(options.expiryPaddingMs)}`,
    );
  }

  return {
    client: options.client,
    keyPrefix,
    timeoutMs,
    clientTime: time === 'client',
    cluster: options.cluster ?? client.isCluster === true,
    paddingArg: String(padding),
  };
}
