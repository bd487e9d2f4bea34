/**
 * The few commands {@link RedisStore} needs from a Redis client.
 *
 * ioredis `Redis` and `Cluster` fit it as they are. For another client (e.g.
 * node-redis), write a small object that forwards these calls:
 *
 * ```ts
 * const client: RedisClient = {
 *   evalsha: (sha, numkeys, ...args) => redis.sendCommand(['EVALSHA', sha, String(numkeys), ...args.map(String)]),
 *   eval: (script, numkeys, ...args) => redis.sendCommand(['EVAL', script, String(numkeys), ...args.map(String)]),
 *   del: (...keys) => redis.del(keys),
 *   get status() { return redis.isReady ? 'ready' : 'connecting'; },
 * };
 * ```
 *
 * Errors must reject the promise; a `NOSCRIPT` reply must reject with an error
 * whose message starts with the reply (`NOSCRIPT ...`, as ioredis, iovalkey
 * and node-redis give it; Valkey GLIDE's `... - NoScriptError: ...` is
 * recognised too): the store then sends the script with `EVAL`.
 *
 * Every key a script touches is passed in `KEYS[]`, and the keys of one call
 * share one hash tag (one bucket's keys; a request's buckets are grouped by
 * slot with `cluster: true`), as Dragonfly and Cluster proxies require.
 *
 * @publicApi
 */
export interface RedisClient {
  /** `EVALSHA sha numkeys key... arg...`. */
  evalsha(sha1: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  /** `EVAL script numkeys key... arg...` (also caches the script under its SHA1). */
  eval(script: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  /** `DEL key...` (keys of one call always share a Cluster slot). */
  del(...keys: string[]): Promise<unknown>;
  /** `PING`, for health checks (ioredis has it); without it they send `EVAL "return 1" 0`. */
  ping?(): Promise<unknown>;
  /**
   * Connection state, when the client has one (ioredis: `'ready'` once
   * usable). When present and neither `'ready'` nor `'wait'` (ioredis' lazy,
   * not yet connected state, which connects on the first command), the store
   * fails fast instead of handing the command to an offline queue that would
   * replay it, and charge the bucket, long after the caller gave up.
   */
  readonly status?: string;
  /** True for a Redis Cluster client (ioredis `Cluster`): checks are then grouped by slot. */
  readonly isCluster?: boolean;
}
