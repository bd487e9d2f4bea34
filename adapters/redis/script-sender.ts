import type { RedisClient } from './redis-client.interface.js';

/**
 * Calls written together: a quarter of the commands waiting for a reply on
 * the connection, within these bounds. One unbounded batch per tick makes
 * Node and Redis take turns (each waits while the other works through the
 * whole batch: at 16 in flight, 0.67x rate-limiter-flexible's decisions/s);
 * batches of a quarter keep both busy, Redis on one while Node makes the
 * next, and stay large enough under heavy load to spare most of the writes
 * (`bench/redis`, 16 and 256 in flight).
 */
const MIN_BATCH = 4;
const MAX_BATCH = 64;

/** Sends `EVALSHA sha numkeys ...args`: the reply, or the error Redis answered. */
export interface SendScript {
  (sha: string, numkeys: number, args: readonly string[]): Promise<unknown>;
  /**
   * ioredis' standalone client: writes the calls corked so far now, rather
   * than at the end of the tick (`script-batch.ts`: the first half of a
   * burst). Absent for other clients, which write each call themselves.
   */
  readonly writeNow?: () => void;
}

/** What ioredis' standalone `Redis` client has beyond {@link RedisClient}, as far as {@link scriptSender} uses it. */
interface IoredisStandalone extends RedisClient {
  /** The connection's socket (`Redis.stream`: a `net.Socket` or `tls.TLSSocket`). */
  readonly stream?: { cork?(): void; uncork?(): void } | null;
  /** Commands written and not answered yet (ioredis' internal queue; read for its length only). */
  readonly commandQueue?: { readonly length: number };
  readonly options: { readonly keyPrefix?: string; readonly showFriendlyErrorStack?: boolean };
  sendCommand(command: unknown): unknown;
  defineCommand(...args: unknown[]): unknown;
  pipeline(...args: unknown[]): unknown;
}

/**
 * How the store sends its scripts.
 *
 * ioredis' standalone client: the socket is corked from the first script
 * call of a tick that finds a command already awaiting its reply (never for
 * a lone call on an idle connection: one request at a time adds no latency)
 * until the batch is full (see {@link MIN_BATCH}) or the tick
 * ends (`process.nextTick`), so that the calls of concurrent requests made in
 * one tick (typically: the requests that one batch of replies set going
 * again) leave in a few writes, not one each. Every call still is
 * its own command, answered as soon as its reply is read, and the next batch
 * leaves without waiting for the last one to be answered. One socket write
 * and one Redis read per batch instead of one per call: that system call,
 * and the wake-up of Redis it causes, cost more than the rest of a call on
 * either side (`bench/redis`).
 *
 * And never through ioredis' auto-pipelining (`enableAutoPipelining`), which
 * holds each automatic pipeline until the one before it is fully answered:
 * Node then waits while Redis runs a whole batch of scripts, and Redis waits
 * while Node handles the replies; the longer the script, the slower
 * (measured: about half the decisions per second at 16 in flight). The
 * client's own `evalsha` is called on a view of the client whose options say
 * no auto-pipelining and whose `sendCommand` is the client's: ioredis'
 * command methods read nothing else of `this` (`utils/Commander.js`), so the
 * command is built exactly as the client builds it (key prefix, reply
 * encoding, friendly error stacks) and written as any command is.
 *
 * Any other client (ioredis `Cluster`, whose commands go to a connection per
 * node, or an adapter for another library): its own `evalsha`.
 */
export function scriptSender(client: RedisClient): SendScript {
  if (!isIoredisStandalone(client))
    return (sha, numkeys, args) => client.evalsha(sha, numkeys, ...args);
  const { keyPrefix, showFriendlyErrorStack } = client.options;
  const view = {
    options: { keyPrefix, showFriendlyErrorStack, enableAutoPipelining: false },
    isPipeline: false,
    sendCommand: (command: unknown) => client.sendCommand(command),
  };
  const evalsha = client.evalsha;
  let corked: { uncork?(): void } | undefined;
  let corkedCalls = 0;
  let batch = MIN_BATCH;
  const uncork = (): void => {
    const stream = corked;
    corked = undefined;
    corkedCalls = 0;
    stream?.uncork?.();
  };
  const send = (sha: string, numkeys: number, args: readonly string[]): Promise<unknown> => {
    // Corked only behind a command already awaiting its reply: a call on an
    // idle connection (one request at a time, the first of a burst) leaves
    // at once, since nothing would join it before Redis could answer it.
    const waiting = client.commandQueue?.length ?? 0;
    if (corked === undefined && waiting > 0 && client.status === 'ready') {
      // Read each time: ioredis replaces the socket when it reconnects.
      const stream = client.stream;
      if (stream && typeof stream.cork === 'function' && typeof stream.uncork === 'function') {
        stream.cork();
        corked = stream;
        batch = Math.min(MAX_BATCH, Math.max(MIN_BATCH, waiting >> 2));
        process.nextTick(uncork);
      }
    }
    const reply = evalsha.call(view as unknown as RedisClient, sha, numkeys, ...args);
    // A full batch leaves at once: Redis starts on it while the tick makes the next.
    if (corked !== undefined && ++corkedCalls >= batch) uncork();
    return reply;
  };
  return Object.assign(send, { writeNow: uncork });
}

/**
 * ioredis' standalone client: how many commands on its connection await
 * their replies (what tells a lone call from concurrent ones); any other
 * client: `undefined` (its calls are not batched, `script-batch.ts`).
 */
export function awaitingReplies(client: RedisClient): (() => number) | undefined {
  if (!isIoredisStandalone(client)) return undefined;
  return () => client.commandQueue?.length ?? 0;
}

/** ioredis' `Redis` (not its `Cluster`, not another library's client). */
function isIoredisStandalone(client: RedisClient): client is IoredisStandalone {
  const io = client as Partial<IoredisStandalone>;
  return (
    client.isCluster !== true &&
    typeof io.options === 'object' &&
    io.options !== null &&
    typeof io.sendCommand === 'function' &&
    typeof io.defineCommand === 'function' &&
    typeof io.pipeline === 'function'
    // Not `'stream' in client`: ioredis sets `stream` when it connects, and
    // a store is usually created before (the socket is read at each call).
  );
}
