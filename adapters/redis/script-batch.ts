import type { RedisScript } from './scripts/index.js';
import { SCRIPTS } from './scripts/index.js';

/**
 * Most `consume_one` calls a batch takes: its keys, 3 arguments each, and
 * its reply, 5 fields each, stay small; past it a batch leaves and the next
 * one starts (the sender corks them into one write all the same).
 */
export const MAX_BATCH = 64;

/** Sends one script (`EVALSHA`, `EVAL` on `NOSCRIPT`): the reply, or the error Redis answered. */
export type CallScript = (
  script: RedisScript,
  numkeys: number,
  args: readonly string[],
) => Promise<unknown>;

interface Queued {
  /** `consume_one`'s arguments: key, now, padding, '0', rate, burst, cost (a lease's maxExtra after: 0). */
  readonly args: readonly string[];
  resolve(reply: unknown): void;
  reject(error: unknown): void;
}

/**
 * Several requests' `consume_one` calls in one script call
 * (`scripts/consume-batch.lua.ts`), on ioredis' standalone client.
 *
 * Part of each call is the command itself: in Redis its parsing and the
 * script's call (an empty script costs 1.63 µs of `consume_one`'s 8.85,
 * `bench/redis/lua-costs.mjs`) and `TIME` (0.9 µs), in Node building and
 * reading the command. A batch pays those once: at 16 in flight, 5.8
 * against 7.9 µs of script time and 8.8 against 13.1 µs of Node CPU per
 * decision, 1.26x against 1.07x rate-limiter-flexible's decisions/s
 * (`bench/redis/redis.mjs`, `docs/redis-batching.md`).
 *
 * - A lone call is never held: a call made while no command awaits its reply
 *   on the connection leaves at once, as `consume_one` (one request at a time
 *   costs what it did). Calls made while others await their replies (what
 *   concurrent requests do) wait for the end of the tick
 *   (`process.nextTick`, as the corked sender's batch does), or until
 *   {@link MAX_BATCH} of them are queued.
 * - Calls share a batch only with calls of the same time argument: `''`
 *   (Redis `TIME`, read once for the batch) or the same client clock reading.
 * - Each call keeps its own answer. The script decides each in turn as if it
 *   were its own call; a command of one call that fails (a key holding
 *   another type, a write refused for memory) fails that call alone, with
 *   Redis' error, and writes nothing for it. A batch that fails as a whole
 *   (the connection, a server busy with another script) fails each of its
 *   calls with that error, as it would have failed each sent alone: it is not
 *   sent again call by call, since Redis may have run it (no call is charged
 *   twice). `NOSCRIPT` is answered with `EVAL` by `call`, as for any script;
 *   a call's deadline is its own (`guarded-call.ts`).
 * - A burst (the calls made in the tick in which batches of this store were
 *   answered: requests set going again by their answers) goes in two halves:
 *   once half of the calls in flight are queued (those answered this tick
 *   and those still awaiting their replies), they are written at once, and
 *   the rest at the end of the tick. Redis runs the first half while Node
 *   makes the second, and the two come back as two replies, so that Node
 *   handles one while Redis runs the other. Sent whole, the burst kept Node
 *   and Redis taking turns: at 16 in flight one batch (and a lone call
 *   ahead of it) went round, each side idle while the other worked
 *   (`performance.eventLoopUtilization()` about 0.5); in halves, 1.3 to
 *   1.8x the decisions/s of sending whole (`docs/redis-batching.md`). The
 *   first call of a burst waits for the others even on an idle connection:
 *   it is not a lone request, since the tick makes the others at once.
 */
export class ScriptBatch {
  private queue: Queued[] = [];
  private scheduled = false;
  /** Calls sent in batches (or alone by {@link flush}) and not answered yet. */
  private outstanding = 0;
  /** Calls answered since the last end of tick: more than one, the calls made now are a burst. */
  private answered = 0;

  /**
   * @param call sends a script (the store's runner: `EVALSHA`, `EVAL` on `NOSCRIPT`).
   * @param awaitingReplies commands written on the connection and not answered yet.
   * @param writeNow writes what the sender corked so far now (the first half of a burst).
   */
  constructor(
    private readonly call: CallScript,
    private readonly awaitingReplies: () => number,
    private readonly writeNow?: () => void,
  ) {}

  /**
   * `consume_one` with `args` (its KEYS[1] then its ARGV): its reply, from a
   * batch; `undefined` for a lone call, which the caller sends at once, as
   * it would without batches.
   */
  consumeOne(args: readonly string[]): Promise<unknown> | undefined {
    const queue = this.queue;
    const burst = this.answered > 1;
    if (!burst && queue.length === 0 && this.awaitingReplies() === 0) return undefined;
    // A different time argument starts a new batch: one batch, one time.
    if (queue.length > 0 && queue[0]!.args[1] !== args[1]) this.flush();
    return new Promise((resolve, reject) => {
      const length = this.queue.push({ args, resolve, reject });
      if (length >= MAX_BATCH) this.flush();
      else if (burst && length >= (this.answered + this.outstanding + 1) >> 1) {
        this.flush();
        this.writeNow?.();
      } else this.atEndOfTick();
    });
  }

  private atEndOfTick(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(this.endOfTick);
  }

  /**
   * Runs once the calls made in this tick are made (the replies' continuations
   * are microtasks, which run before it): the queue leaves, and the burst ends.
   */
  private readonly endOfTick = (): void => {
    this.scheduled = false;
    this.answered = 0;
    this.flush();
  };

  /** `count` calls sent: counted until answered (see {@link consumeOne}'s halves). */
  private send(script: RedisScript, count: number, args: readonly string[]): Promise<unknown> {
    this.outstanding += count;
    return this.call(script, count, args).then(
      (reply) => {
        this.outstanding -= count;
        this.answered += count;
        this.atEndOfTick();
        return reply;
      },
      (error: unknown) => {
        this.outstanding -= count;
        throw error;
      },
    );
  }

  /**
   * Sends the calls queued so far now. The store calls it before any other
   * command it sends (a refund, a peek, a reset), so that Redis runs the
   * store's calls in the order they were made.
   */
  flush(): void {
    const calls = this.queue;
    if (calls.length === 0) return;
    this.queue = [];
    if (calls.length === 1) {
      const only = calls[0]!;
      this.send(SCRIPTS.consume_one, 1, only.args).then(only.resolve, only.reject);
      return;
    }
    const count = calls.length;
    const first = calls[0]!.args;
    // KEYS, then now, padding, '0' (as consume_one's), then each call's rate, burst, cost.
    const args: string[] = new Array<string>(count + 3 + 3 * count);
    for (let i = 0; i < count; i++) args[i] = calls[i]!.args[0]!;
    args[count] = first[1]!;
    args[count + 1] = first[2]!;
    args[count + 2] = first[3]!;
    for (let i = 0, at = count + 3; i < count; i++, at += 3) {
      const own = calls[i]!.args;
      args[at] = own[4]!;
      args[at + 1] = own[5]!;
      args[at + 2] = own[6]!;
    }
    this.send(SCRIPTS.consume_batch, count, args).then(
      (reply) => answer(calls, reply),
      (error: unknown) => {
        for (const queued of calls) queued.reject(error);
      },
    );
  }
}

/** Each call's part of the batch's reply: its decision, or the error of its own command. */
function answer(calls: readonly Queued[], reply: unknown): void {
  const count = calls.length;
  if (!Array.isArray(reply) || reply.length !== 5 * count) {
    const error = new Error(`unexpected reply from the rate-limit batch script: ${String(reply)}`);
    for (const queued of calls) queued.reject(error);
    return;
  }
  for (let i = 0, at = 0; i < count; i++, at += 5) {
    if (String(reply[at]) === 'error') calls[i]!.reject(new Error(String(reply[at + 1])));
    else calls[i]!.resolve(reply.slice(at, at + 5));
  }
}
