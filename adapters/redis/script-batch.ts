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
 */
export class ScriptBatch {
  private queue: Queued[] = [];
  private scheduled = false;

  /**
   * @param call sends a script (the store's runner: `EVALSHA`, `EVAL` on `NOSCRIPT`).
   * @param awaitingReplies commands written on the connection and not answered yet.
   */
  constructor(
    private readonly call: CallScript,
    private readonly awaitingReplies: () => number,
  ) {}

  /**
   * `consume_one` with `args` (its KEYS[1] then its ARGV): its reply, from a
   * batch; `undefined` for a lone call, which the caller sends at once, as
   * it would without batches.
   */
  consumeOne(args: readonly string[]): Promise<unknown> | undefined {
    const queue = this.queue;
    if (queue.length === 0 && this.awaitingReplies() === 0) return undefined;
    // A different time argument starts a new batch: one batch, one time.
    if (queue.length > 0 && queue[0]!.args[1] !== args[1]) this.flush();
    return new Promise((resolve, reject) => {
      this.queue.push({ args, resolve, reject });
      if (this.queue.length >= MAX_BATCH) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        process.nextTick(this.endOfTick);
      }
    });
  }

  private readonly endOfTick = (): void => {
    this.scheduled = false;
    this.flush();
  };

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
      this.call(SCRIPTS.consume_one, 1, only.args).then(only.resolve, only.reject);
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
    this.call(SCRIPTS.consume_batch, count, args).then(
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
