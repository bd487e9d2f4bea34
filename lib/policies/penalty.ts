import { gcraBlock, gcraConsume, type RateLimitDecision } from '../algorithms/gcra.js';
import { TOKEN_EPSILON } from '../algorithms/token-epsilon.js';
import { describeValue } from '../errors/option-error.js';
import { parseDuration } from '../limits/parse-duration.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import type {
  BlockCheck,
  ConsumeResult,
  RateLimitCheck,
} from '../store/rate-limit-store.interface.js';
import { isWindowLimit } from '../store/rate-limit-store.interface.js';
import { rateLimitChannels } from '../observability/rate-limit-channels.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import type { DecisionStep } from './call-steps.js';
import type { LimitPolicy } from './limit-policy.js';

/** Validate `blockDuration`; its milliseconds, or `undefined` when the limit has none. Throws through `fail`. */
export function resolveBlockDuration(
  value: unknown,
  limit: {
    readonly rate: number;
    readonly burst: number;
    readonly dynamic: boolean;
    readonly shadow: boolean;
    readonly storeBlocks: boolean;
  },
  fail: (option: string, problem: string) => never,
): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined)
    fail(
      'blockDuration',
      `must be a positive number of milliseconds or a duration such as '15min', got ${describeValue(value)}`,
    );
  if (limit.shadow) fail('blockDuration', 'means nothing on a shadow limit, which never denies');
  if (!limit.storeBlocks)
    fail(
      'blockDuration',
      'needs a store that can block a bucket (RateLimitStore.block); this one cannot',
    );
  // A block no longer than a token's interval is what any denial already is: it would only cost a store call.
  if (!limit.dynamic && ms! <= 1000 / limit.rate) {
    fail(
      'blockDuration',
      `(${ms} ms) must be longer than the interval between two tokens (${1000 / limit.rate} ms), or it blocks nothing`,
    );
  }
  return ms;
}

/** What a denial turns into when its limits block: the decisions to answer, and the blocks to apply. */
export interface Penalties {
  readonly decisions: readonly RateLimitDecision[];
  readonly blocks: readonly BlockCheck[];
  /** The blocked limits' names, parallel to `blocks` (for the penalty event). */
  readonly names: readonly string[];
  /** Each block's index in `decisions`, parallel to `blocks`. */
  readonly at: readonly number[];
}

/**
 * Apply `blockDuration` to a denied evaluation: every limit that denied (by
 * its limit, not by a cost above the burst) and has a `blockDuration` blocks
 * its key, unless the key is plainly blocked already (its bucket further
 * than its capacity ahead: a blocked key costs what a denied one costs); the
 * decisions answered are the blocked buckets', so `Retry-After` and `t` say
 * when the block ends. Pure: the caller applies the blocks.
 *
 * The bucket alone cannot tell the last token interval of a block from a
 * bucket just emptied (both are less than one token short), so the blocks
 * are applied `unlessBlocked`: the store, which marks the blocks it writes,
 * leaves a block it is still serving as it is, and {@link settleBlocks}
 * answers from what it says.
 */
export function penalize(
  limits: readonly ResolvedLimit[],
  from: number,
  checks: readonly RateLimitCheck[],
  decisions: readonly RateLimitDecision[],
  now: number,
): Penalties | undefined {
  let answered: RateLimitDecision[] | undefined;
  let blocks: BlockCheck[] | undefined;
  let names: string[] | undefined;
  let at: number[] | undefined;
  for (let i = 0; i < decisions.length; i++) {
    const durationMs = limits[from + i]?.blockMs;
    const decision = decisions[i]!;
    const check = checks[i];
    if (
      durationMs === undefined ||
      check === undefined ||
      decision.allowed ||
      decision.reason !== 'limit'
    )
      continue;
    // Refused at start-up for windows (resolve-limit.ts): they have no refill to block.
    if (isWindowLimit(check.limit)) continue;
    if (blockedAlready(decision.resetMs, check.limit)) continue;
    const tat = gcraBlock(now + decision.resetMs, now, check.limit, durationMs);
    (answered ??= decisions.slice())[i] = gcraConsume(tat, now, check.limit, check.cost).decision;
    (blocks ??= []).push({
      key: check.key,
      namespace: check.namespace,
      identity: check.identity,
      limit: check.limit,
      durationMs,
    });
    (names ??= []).push(limits[from + i]!.name);
    (at ??= []).push(i);
  }
  return answered === undefined
    ? undefined
    : { decisions: answered, blocks: blocks!, names: names!, at: at! };
}

/** A bucket further ahead than its capacity: only a block (or a clock that stepped back) puts it there. */
function blockedAlready(resetMs: number, limit: { rate: number; burst: number }): boolean {
  return resetMs > limit.burst * (1000 / limit.rate) * (1 + TOKEN_EPSILON);
}

/**
 * The answer once the store applied the blocks: each blocked limit's
 * decision from its bucket as the store left it (blocked anew, or still
 * serving its block, whose end the retry learns), and the blocks that were
 * new. Without the store's answer (it failed), the blocks are taken as
 * applied, which is what the client is told. Pure.
 */
export function settleBlocks(
  penalties: Penalties,
  checks: readonly RateLimitCheck[],
  after: ConsumeResult | undefined,
  now: number,
): Penalties {
  if (after === undefined) return penalties;
  const decisions = penalties.decisions.slice();
  const blocks: BlockCheck[] = [];
  const names: string[] = [];
  const at: number[] = [];
  penalties.blocks.forEach((block, n) => {
    const bucket = after.decisions[n];
    const i = penalties.at[n]!;
    if (bucket === undefined) return;
    const check = checks[i]!;
    const limit = check.limit;
    if (isWindowLimit(limit)) return; // never blocked (penalize)
    decisions[i] = gcraConsume(now + bucket.resetMs, now, limit, check.cost).decision;
    if (!blockedAlready(bucket.resetMs, limit)) return;
    blocks.push(block);
    names.push(penalties.names[n]!);
    at.push(i);
  });
  return { decisions, blocks, names, at };
}

/**
 * The step on the decision: the keys of the limits that denied are blocked,
 * unless still serving a block; the answer says until when. With a store
 * that answers with a promise (Redis), the denial waits for it.
 */
export const blockOnDenial: DecisionStep = (input, result, { engine, owner }) => {
  if (result.allowed) return result;
  const { route, from, checks, now } = input;
  const penalties = penalize(route.limits, from, checks, result.decisions, now);
  if (penalties === undefined) return result;
  const answer = (after: ConsumeResult | undefined): ConsumeResult => {
    const settled = settleBlocks(penalties, checks, after, now);
    if (settled.blocks.length > 0 && rateLimitChannels.penalty.hasSubscribers) {
      rateLimitChannels.penalty.publish({
        route: route.routeId,
        transport: route.transport.type,
        limits: settled.names,
        blocks: settled.blocks,
        owner,
      });
    }
    return { allowed: false, decisions: settled.decisions };
  };
  const after = engine.applyBlocks(penalties.blocks, now);
  return isPromiseLike(after) ? after.then(answer) : answer(after);
};

/** `blockDuration`: acts on the decision (a denial blocks its key). */
export const penaltyPolicy: LimitPolicy<'blockMs'> = {
  options: ['blockDuration'],
  refusedOnConcurrency: {
    blockDuration:
      'is a rate-limit option; a concurrency limit frees a slot as soon as a request ends',
  },
  appliesTo: (limit) => limit.blockMs !== undefined,
  onDecision: blockOnDenial,
  resolve: (options, draft, context, fail) => ({
    blockMs: resolveBlockDuration(
      options.blockDuration,
      {
        rate: draft.rate,
        burst: draft.burst,
        dynamic: draft.dynamic !== undefined,
        shadow: draft.shadow === true,
        storeBlocks: context.storeBlocks !== false,
      },
      fail,
    ),
  }),
};
