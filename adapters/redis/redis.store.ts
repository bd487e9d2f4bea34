import { createHash } from 'node:crypto';
import type { RateLimitDecision } from '../../lib/algorithms/rate-limit-decision.js';
import { RateLimitStoreError, toStoreError } from '../../lib/errors/rate-limit-store.error.js';
import type {
  BucketRef,
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  RateLimitCheck,
  RateLimitStore,
  RefundRequest,
} from '../../lib/store/rate-limit-store.interface.js';
import { GCRA_LUA } from './gcra.lua.js';
import type { RedisClient } from './redis-client.interface.js';
import { checkKeyPrefix, keySlot, redisKey } from './redis-keys.js';

/** Options of {@link RedisStore}. */
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
   * Group checks by Cluster slot (see {@link RedisStore}). Defaults to the
   * client's `isCluster` (true for an ioredis `Cluster`); set it for a proxy
   * that enforces slots on a client that does not say so.
   */
  readonly cluster?: boolean;
  /**
   * Extra lifetime of keys beyond the moment their bucket is full again, in
   * milliseconds. It never changes a decision (a key past its time reads as a
   * full bucket), only memory. Leave it at 0 in production; tests driving
   * `time: 'client'` with a virtual clock that stands still while real time
   * passes set it so keys do not expire in Redis before the virtual clock
   * reaches their time.
   * @default 0
   */
  readonly expiryPaddingMs?: number;
}

/**
 * Default {@link RedisStoreOptions.timeoutMs}: 100 ms.
 *
 * A healthy Redis answers this script in well under a millisecond plus the
 * network round trip (sub-millisecond in one data centre, a few ms across
 * zones), so 100 ms is one to two orders of magnitude above normal, which
 * absorbs event-loop stalls and GC pauses of a busy Node process without false
 * alarms. It is also short enough that, when Redis is hung or failing over,
 * each request waits at most a tenth of a second before `failMode` decides,
 * instead of piling up behind a dead connection.
 */
export const DEFAULT_REDIS_TIMEOUT_MS = 100;

const SCRIPT_SHA = createHash('sha1').update(GCRA_LUA).digest('hex');

/**
 * One check of a {@link LeaseRequest}: a consume check, plus how many more
 * tokens the caller would like to take along.
 */
export interface LeaseCheck extends RateLimitCheck {
  /**
   * Whole tokens wanted beyond `cost`, taken only as far as the bucket holds
   * them after the cost (0: a plain consume). Never decides the admission.
   */
  readonly maxExtra: number;
}

/** What {@link RedisStore.lease} is asked. */
export interface LeaseRequest {
  readonly checks: readonly LeaseCheck[];
  /** As {@link ConsumeRequest.now}. */
  readonly now: number;
}

/** What {@link RedisStore.lease} answers. */
export interface LeaseResult extends ConsumeResult {
  /**
   * Per check, the extra whole tokens taken from its bucket beyond the cost
   * (all 0 when the request is denied). The decisions are those of a plain
   * consume: the bucket after the cost, before the extras.
   */
  readonly extras: readonly number[];
}

/**
 * Script operations: see `gcra.lua.ts`. `C` and `L` are `c` and `l` that also
 * answer the receipts a refund needs (asked only by the Cluster slot-by-slot
 * path, the one that may have to refund).
 */
type ScriptOp = 'c' | 'C' | 'e' | 'p' | 'r' | 'l' | 'L';

/** A check with its Redis key, as the script is given it. */
interface Bucket {
  readonly redisKey: string;
  readonly rate: number;
  readonly burst: number;
  readonly cost: number;
  /** Lease only: whole tokens wanted beyond the cost. */
  readonly maxExtra?: number;
}

/** What one script call answers: the decisions, and for each key what a refund needs. */
interface ScriptAnswer extends LeaseResult {
  /**
   * Per key: the stored value found, and the value written (empty strings for
   * none). Only answered to `C` and `L` (empty otherwise).
   */
  readonly receipts: readonly Receipt[];
}

interface Receipt {
  readonly previous: string;
  readonly written: string;
}

/** A slot already charged by a multi-slot consume or lease: what its refund needs. */
interface Charged {
  readonly group: SlotGroup;
  readonly receipts: readonly Receipt[];
  readonly extras: readonly number[];
}

/** Checks of one request that share a Cluster slot: indexes into the request. */
interface SlotGroup {
  readonly slot: number;
  readonly indexes: number[];
}

/**
 * Redis store: one GCRA Lua script, one round trip per decision.
 *
 * - The script is called by SHA (`EVALSHA`); after a Redis restart, failover
 *   or `SCRIPT FLUSH` the `NOSCRIPT` reply is answered with one `EVAL`, which
 *   also caches the script again. Never `KEYS`/`SCAN`, never a per-request
 *   `SCRIPT LOAD`.
 * - Each bucket is one string key holding its theoretical arrival time, which
 *   expires exactly when the bucket is full again: no sweeping, no stale keys.
 *   The script computes in the frame of `floor(now)` and stores the time as
 *   an integer base plus an offset, so its precision does not depend on the
 *   epoch (at `Date.now()` magnitudes doubles are too coarse for high rates).
 * - Failure is bounded: a decision rejects with `RateLimitStoreError` when
 *   Redis does not answer within `timeoutMs`, answers an error, or the client
 *   is not connected (checked before sending, so nothing waits in an offline
 *   queue). Late replies are swallowed, timers are `unref()`'d, and the store
 *   recovers by itself when the client reconnects.
 *
 * All-or-nothing across the checks of one request:
 * - Standalone Redis: all checks run in one script call, atomically.
 * - Redis Cluster: a bucket lives in one slot (its key is hash-tagged), so each
 *   bucket's decision is atomic. Checks of one request that fall in different
 *   slots are consumed slot by slot in ascending slot order, each slot in one
 *   atomic script call (an admitted request costs one round trip per slot).
 *   When a slot denies, what the earlier slots took is given back before the
 *   promise settles (their previous state is restored exactly when nobody
 *   charged them since, otherwise TAT -= cost x interval, never below now),
 *   and the later slots are only evaluated, not charged. So: no bucket ever
 *   admits beyond its rate and burst; a denied request ends up charging
 *   nothing, as long as the refund reaches Redis; for the duration of that one
 *   extra round trip the earlier buckets look charged, so concurrent requests
 *   may be denied by them (errors only ever lean towards denying); and since
 *   every request visits slots in the same order, two requests cannot deny
 *   each other through each other's transient charges. If Redis fails or the
 *   deadline passes mid-way, the refund still runs in the background; if it
 *   cannot reach Redis, those buckets stay charged by that request's cost
 *   until they refill (counted in {@link RedisStore.refundFailures}).
 *
 * @publicApi
 */
export class RedisStore implements RateLimitStore {
  private readonly client: RedisClient;
  private readonly keyPrefix: string;
  private readonly timeoutMs: number;
  private readonly clientTime: boolean;
  private readonly cluster: boolean;
  private readonly paddingArg: string;
  private closed = false;
  private callCount = 0;
  private timeoutCount = 0;
  private errorCount = 0;
  private noScriptCount = 0;
  private refundFailureCount = 0;

  constructor(options: RedisStoreOptions) {
    const client = options?.client as Partial<RedisClient> | undefined;
    if (
      !client ||
      typeof client.evalsha !== 'function' ||
      typeof client.eval !== 'function' ||
      typeof client.del !== 'function'
    ) {
      throw new TypeError('RedisStore: client must be a Redis client with evalsha, eval and del (e.g. an ioredis Redis or Cluster)');
    }
    this.client = options.client;
    this.keyPrefix = checkKeyPrefix(options.keyPrefix ?? 'holdup:');

    const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2_147_483_647) {
      throw new TypeError(`RedisStore: timeoutMs must be a positive number of milliseconds, got ${String(options.timeoutMs)}`);
    }
    this.timeoutMs = timeoutMs;

    const time = options.time ?? 'server';
    if (time !== 'server' && time !== 'client') {
      throw new TypeError(`RedisStore: time must be 'server' or 'client', got ${JSON.stringify(options.time)}`);
    }
    this.clientTime = time === 'client';

    if (options.cluster !== undefined && typeof options.cluster !== 'boolean') {
      throw new TypeError(`RedisStore: cluster must be a boolean, got ${typeof options.cluster}`);
    }
    this.cluster = options.cluster ?? client.isCluster === true;

    const padding = options.expiryPaddingMs ?? 0;
    if (typeof padding !== 'number' || !Number.isFinite(padding) || padding < 0) {
      throw new TypeError(`RedisStore: expiryPaddingMs must be a number >= 0, got ${String(options.expiryPaddingMs)}`);
    }
    this.paddingArg = String(padding);
  }

  /** Calls asked of Redis (consume, lease, giveBack, peek, reset) since start. */
  get calls(): number {
    return this.callCount;
  }

  /** Calls rejected because Redis did not answer within `timeoutMs`. */
  get timeouts(): number {
    return this.timeoutCount;
  }

  /** Calls rejected for any other reason: client not connected, Redis error reply, store closed. */
  get errors(): number {
    return this.errorCount;
  }

  /** `NOSCRIPT` replies answered by re-sending the script (after a restart, failover or `SCRIPT FLUSH`). */
  get scriptReloads(): number {
    return this.noScriptCount;
  }

  /** Cluster only: refunds of a request denied by a later slot that could not reach Redis. */
  get refundFailures(): number {
    return this.refundFailureCount;
  }

  consume(request: ConsumeRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [] });
    return this.guarded('consume', () => {
      const buckets = this.buckets(checks);
      const groups = this.cluster ? groupBySlot(buckets) : undefined;
      if (groups === undefined || groups.length === 1) return this.run('c', buckets, now).then(withoutReceipts);
      return this.consumeAcrossSlots('c', buckets, groups, now).then(withoutReceipts);
    });
  }

  /**
   * A consume that also takes a lease: all checks are charged their cost or
   * none is (exactly as {@link consume}, same decisions), and when the
   * request is admitted each check's bucket additionally gives up to
   * `maxExtra` whole tokens, as many as it holds after the cost, in the same
   * atomic script call. The caller owns those tokens: spend them locally, and
   * hand back what is left with {@link refund}. Used by `TwoTierStore`.
   *
   * Same failure rules as {@link consume} (timeout, fail-fast, Cluster slot
   * by slot, where a slot that denies gives back the cost and extras the
   * earlier slots took).
   */
  lease(request: LeaseRequest): Promise<LeaseResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [], extras: [] });
    return this.guarded('lease', () => {
      const buckets = checks.map((check) => {
        const maxExtra = Math.floor(check.maxExtra);
        if (!(maxExtra >= 0)) throw new TypeError(`RedisStore: lease maxExtra must be a number >= 0, got ${String(check.maxExtra)}`);
        return { redisKey: redisKey(this.keyPrefix, check.key), rate: check.limit.rate, burst: check.limit.burst, cost: check.cost, maxExtra };
      });
      const groups = this.cluster ? groupBySlot(buckets) : undefined;
      if (groups === undefined || groups.length === 1) return this.run('l', buckets, now).then(withExtras);
      return this.consumeAcrossSlots('l', buckets, groups, now).then(withExtras);
    });
  }

  /**
   * Gives back tokens taken earlier (the unspent part of a lease): each
   * check's bucket gets `cost` tokens back, `TAT -= cost x interval`, never
   * past "full now" (tokens the bucket would have regained by now anyway are
   * not added twice). A missing key is a full bucket and stays so. Answers
   * each bucket as it is afterwards, like {@link peek}.
   */
  refund(request: RefundRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [] });
    return this.guarded('refund', async () => {
      const buckets = this.buckets(checks);
      const none = (count: number): Receipt[] => Array.from({ length: count }, () => ({ previous: '', written: '' }));
      const groups = this.cluster ? groupBySlot(buckets) : undefined;
      if (groups === undefined || groups.length === 1) return withoutReceipts(await this.run('r', buckets, now, none(buckets.length)));
      const decisions: RateLimitDecision[] = new Array(buckets.length);
      await Promise.all(
        groups.map(async (group) =>
          place(decisions, group, (await this.run('r', pick(buckets, group), now, none(group.indexes.length))).decisions),
        ),
      );
      return { allowed: true, decisions };
    });
  }

  peek(request: BucketsRequest): Promise<ConsumeResult> {
    const { checks, now } = request;
    if (checks.length === 0) return Promise.resolve({ allowed: true, decisions: [] });
    return this.guarded('peek', async () => {
      const buckets = this.buckets(checks);
      const groups = this.cluster ? groupBySlot(buckets) : undefined;
      if (groups === undefined || groups.length === 1) return withoutReceipts(await this.run('p', buckets, now));
      // No atomicity to keep across slots when nothing is written.
      const decisions: RateLimitDecision[] = new Array(buckets.length);
      await Promise.all(
        groups.map(async (group) => place(decisions, group, (await this.run('p', pick(buckets, group), now)).decisions)),
      );
      return { allowed: true, decisions };
    });
  }

  reset(request: BucketsRequest): Promise<void> {
    const { checks } = request;
    if (checks.length === 0) return Promise.resolve();
    return this.guarded('reset', async () => {
      const keys = checks.map((check) => redisKey(this.keyPrefix, check.key));
      if (!this.cluster) {
        await this.client.del(...keys);
        return;
      }
      const bySlot = new Map<number, string[]>();
      for (const key of keys) {
        const slot = keySlot(key);
        const group = bySlot.get(slot);
        if (group) group.push(key);
        else bySlot.set(slot, [key]);
      }
      await Promise.all([...bySlot.values()].map((group) => this.client.del(...group)));
    });
  }

  /**
   * Stops accepting calls. The client is left open: it was passed in, so its
   * owner closes it. The store holds no timer beyond the per-call timeouts,
   * which are `unref()`'d and end with their call.
   */
  close(): void {
    this.closed = true;
  }

  private buckets(checks: readonly BucketRef[] | readonly RateLimitCheck[]): Bucket[] {
    return checks.map((check) => ({
      redisKey: redisKey(this.keyPrefix, check.key),
      rate: check.limit.rate,
      burst: check.limit.burst,
      cost: 'cost' in check ? check.cost : 0,
    }));
  }

  /** The multi-slot protocol described on the class (`op`: `c`, or `l` for a lease). */
  private async consumeAcrossSlots(op: 'c' | 'l', buckets: Bucket[], groups: SlotGroup[], now: number): Promise<ScriptAnswer> {
    const decisions: RateLimitDecision[] = new Array(buckets.length);
    const extras: number[] = new Array<number>(buckets.length).fill(0);
    const charged: Charged[] = [];
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!;
      let result: ScriptAnswer;
      try {
        result = await this.run(op === 'c' ? 'C' : 'L', pick(buckets, group), now);
      } catch (error) {
        // This slot may or may not have been charged (no answer); the earlier
        // ones were: give those back, without making the caller wait.
        void this.refundCharged(buckets, charged, now, decisions);
        throw error;
      }
      place(decisions, group, result.decisions);
      if (result.allowed) {
        charged.push({ group, receipts: result.receipts, extras: result.extras });
        place(extras, group, result.extras);
        continue;
      }
      const later = groups.slice(g + 1);
      await Promise.all([
        this.refundCharged(buckets, charged, now, decisions),
        ...later.map(async (rest) => place(decisions, rest, (await this.run('e', pick(buckets, rest), now)).decisions)),
      ]);
      return { allowed: false, decisions, extras: extras.fill(0), receipts: [] };
    }
    return { allowed: true, decisions, extras, receipts: [] };
  }

  /**
   * Gives back what `groups` took. Never rejects: a refund that fails leaves
   * the bucket charged, and the decision already recorded for it (taken from
   * the charging call) is then the truth.
   */
  private async refundCharged(buckets: Bucket[], charged: readonly Charged[], now: number, decisions: RateLimitDecision[]): Promise<void> {
    await Promise.all(
      charged.map(async ({ group, receipts, extras }) => {
        // A lease's extras go back with the cost.
        const taken = pick(buckets, group).map((bucket, i) => ({ ...bucket, cost: bucket.cost + extras[i]! }));
        try {
          place(decisions, group, (await this.run('r', taken, now, receipts)).decisions);
        } catch {
          this.refundFailureCount++;
        }
      }),
    );
  }

  /** One script call: EVALSHA, or EVAL when Redis lost the script. `receipts` only for refunds. */
  private async run(op: ScriptOp, buckets: readonly Bucket[], now: number, receipts?: readonly Receipt[]): Promise<ScriptAnswer> {
    const count = buckets.length;
    const lease = op === 'l' || op === 'L';
    const stride = receipts ? 5 : lease ? 4 : 3;
    const args: string[] = new Array(count + 3 + stride * count);
    let i = 0;
    for (let b = 0; b < count; b++) args[i++] = buckets[b]!.redisKey;
    args[i++] = op;
    args[i++] = this.clientTime ? String(now) : '';
    args[i++] = this.paddingArg;
    for (let b = 0; b < count; b++) {
      const bucket = buckets[b]!;
      args[i++] = String(bucket.rate);
      args[i++] = String(bucket.burst);
      args[i++] = String(bucket.cost);
      if (receipts) {
        args[i++] = receipts[b]!.written;
        args[i++] = receipts[b]!.previous;
      } else if (lease) {
        args[i++] = String(bucket.maxExtra ?? 0);
      }
    }
    let reply: unknown;
    try {
      reply = await this.client.evalsha(SCRIPT_SHA, count, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      this.noScriptCount++;
      reply = await this.client.eval(GCRA_LUA, count, ...args);
    }
    return parseReply(reply, count, lease, op === 'C' || op === 'L');
  }

  /**
   * Runs `work` under the store's rules: fail fast when closed or not
   * connected, reject after `timeoutMs`, wrap every failure in
   * `RateLimitStoreError`, swallow whatever comes after the caller got its
   * answer.
   */
  private guarded<T>(operation: string, work: () => Promise<T>): Promise<T> {
    this.callCount++;
    if (this.closed) {
      this.errorCount++;
      return Promise.reject(new RateLimitStoreError(`RedisStore: ${operation} called after close()`));
    }
    const status = this.client.status;
    if (status !== undefined && status !== 'ready' && status !== 'wait') {
      this.errorCount++;
      return Promise.reject(new RateLimitStoreError(`RedisStore: ${operation} failed: Redis client is not ready (status "${status}")`));
    }
    let pending: Promise<T>;
    try {
      pending = work();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        // Check again after the poll phase: if the event loop was stalled
        // past the deadline, a reply may be sitting in the socket, and it
        // should win over a timeout that is only the stall's fault.
        setImmediate(() => {
          if (settled) return;
          settled = true;
          this.timeoutCount++;
          reject(new RateLimitStoreError(`RedisStore: ${operation} got no answer from Redis within ${this.timeoutMs} ms`));
        });
      }, this.timeoutMs);
      timer.unref();
      pending.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.errorCount++;
          reject(toStoreError(error, `RedisStore: ${operation} failed`));
        },
      );
    });
  }
}

function groupBySlot(buckets: readonly Bucket[]): SlotGroup[] {
  const bySlot = new Map<number, number[]>();
  for (let i = 0; i < buckets.length; i++) {
    const slot = keySlot(buckets[i]!.redisKey);
    const indexes = bySlot.get(slot);
    if (indexes) indexes.push(i);
    else bySlot.set(slot, [i]);
  }
  return [...bySlot].map(([slot, indexes]) => ({ slot, indexes })).sort((a, b) => a.slot - b.slot);
}

function pick(buckets: readonly Bucket[], group: SlotGroup): Bucket[] {
  return group.indexes.map((index) => buckets[index]!);
}

function place<T>(into: T[], group: SlotGroup, values: readonly T[]): void {
  group.indexes.forEach((index, i) => {
    into[index] = values[i]!;
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.includes('NOSCRIPT');
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function withoutReceipts(answer: ScriptAnswer): ConsumeResult {
  return { allowed: answer.allowed, decisions: answer.decisions };
}

function withExtras(answer: ScriptAnswer): LeaseResult {
  return { allowed: answer.allowed, decisions: answer.decisions, extras: answer.extras };
}

/**
 * Reads the script's reply (see `gcra.lua.ts`): numbers come as integer
 * replies when they are exact integers, else as text, so fractions and
 * infinity survive; per key a state (1 admitted, 0 denied by the limit, 2 the
 * cost exceeds the burst), then `remaining`, `retryAfterMs`, `resetMs`, then
 * the receipt when asked for.
 */
function parseReply(reply: unknown, count: number, lease: boolean, withReceipts: boolean): ScriptAnswer {
  const width = withReceipts ? 6 : 4;
  if (!Array.isArray(reply) || reply.length !== 1 + width * count + (lease ? count : 0)) {
    throw new Error(`unexpected reply from the rate-limit script: ${errorText(reply)}`);
  }
  const decisions: RateLimitDecision[] = new Array(count);
  const receipts: Receipt[] = withReceipts ? new Array(count) : [];
  for (let i = 0; i < count; i++) {
    const base = 1 + width * i;
    const state = parseNumber(reply[base]);
    const remaining = parseNumber(reply[base + 1]);
    const retryAfterMs = parseNumber(reply[base + 2]);
    const resetMs = parseNumber(reply[base + 3]);
    if (state === 1) decisions[i] = { allowed: true, remaining, retryAfterMs, resetMs };
    else if (state === 0) decisions[i] = { allowed: false, remaining, retryAfterMs, resetMs, reason: 'limit' };
    else if (state === 2) decisions[i] = { allowed: false, remaining, retryAfterMs, resetMs, reason: 'cost-exceeds-burst' };
    else throw new Error(`unexpected decision from the rate-limit script: ${String(reply[base])}`);
    if (withReceipts) receipts[i] = { previous: String(reply[base + 4]), written: String(reply[base + 5]) };
  }
  const extras: number[] = new Array<number>(count).fill(0);
  if (lease) for (let i = 0; i < count; i++) extras[i] = parseNumber(reply[1 + width * count + i]);
  return { allowed: parseNumber(reply[0]) === 1, decisions, receipts, extras };
}

/** A number of the reply: an integer reply (a number, or its text for clients set to return text), or text. */
function parseNumber(field: unknown): number {
  if (typeof field === 'number') return field === 0 ? 0 : field;
  const text = String(field);
  if (text === 'inf') return Number.POSITIVE_INFINITY;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`unexpected number from the rate-limit script: ${text}`);
  // `-0` would make two equal decisions unequal for deep comparisons.
  return value === 0 ? 0 : value;
}
