import type { RateLimitDecision } from '../../lib/algorithms/rate-limit-decision.js';
import {
  isWindowLimit,
  type BlockRequest,
  type ConsumeResult,
} from '../../lib/store/rate-limit-store.interface.js';
import { redisKey } from './redis-keys.js';
import {
  BLOCK,
  BLOCK_UNLESS_BLOCKED,
  BLOCK_WINDOW,
  BLOCK_WINDOW_UNLESS_BLOCKED,
  type Bucket,
  type Operation,
} from './script-runner.js';
import { windowSpec } from './window-spec.js';

/** Runs one operation on buckets, one call per Cluster slot (`RedisStore`'s `perSlot`). */
export type PerSlot = (op: Operation, buckets: readonly Bucket[]) => Promise<ConsumeResult>;

/**
 * `RedisStore.block`'s work: each bucket blocked for its duration, token
 * buckets by `block.lua`, windows anchored at their first hit by
 * `block-window.lua` (full until the block ends); one call per script and
 * Cluster slot, each answer in its check's place. `unlessBlocked`: the
 * scripts' variants that leave a block still running as it is.
 *
 * @internal
 */
export function blockBuckets(
  request: BlockRequest,
  keyPrefix: string,
  perSlot: PerSlot,
): Promise<ConsumeResult> {
  const { checks, now } = request;
  const unless = request.unlessBlocked === true;
  const buckets = checks.map(({ key, limit, durationMs }): Bucket => {
    const redisKeyOf = redisKey(keyPrefix, key);
    if (!isWindowLimit(limit))
      return { redisKey: redisKeyOf, rate: limit.rate, burst: limit.burst, cost: durationMs };
    // Refused at start-up (resolve-limit.ts): other windows have no block.
    if (limit.algorithm !== 'fixed-window' || limit.anchor !== 'first-hit')
      throw new TypeError(`RedisStore: block is not supported for ${limit.algorithm} limits`);
    const spec = windowSpec(limit, now);
    return { redisKey: redisKeyOf, rate: 0, burst: limit.quota, cost: durationMs, spec };
  });
  const windows = buckets.flatMap((bucket, i) => (bucket.spec === undefined ? [] : [i]));
  const tokenOp = unless ? BLOCK_UNLESS_BLOCKED : BLOCK;
  if (windows.length === 0) return perSlot(tokenOp, buckets);
  const windowOp = unless ? BLOCK_WINDOW_UNLESS_BLOCKED : BLOCK_WINDOW;
  if (windows.length === buckets.length) return perSlot(windowOp, buckets);
  return blockBothKinds(buckets, windows, tokenOp, windowOp, perSlot);
}

/** Token buckets and windows in one request: one call each, each answer in its place. */
async function blockBothKinds(
  buckets: readonly Bucket[],
  windows: readonly number[],
  tokenOp: Operation,
  windowOp: Operation,
  perSlot: PerSlot,
): Promise<ConsumeResult> {
  const tokens = buckets.flatMap((_, i) => (windows.includes(i) ? [] : [i]));
  const [windowed, tokened] = await Promise.all([
    perSlot(
      windowOp,
      windows.map((i) => buckets[i]!),
    ),
    perSlot(
      tokenOp,
      tokens.map((i) => buckets[i]!),
    ),
  ]);
  const decisions: RateLimitDecision[] = new Array(buckets.length);
  windows.forEach((at, j) => (decisions[at] = windowed.decisions[j]!));
  tokens.forEach((at, j) => (decisions[at] = tokened.decisions[j]!));
  return { allowed: false, decisions };
}
