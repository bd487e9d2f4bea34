import type { ExecutionContext } from '@nestjs/common';
import type { HeaderLimit } from '../headers/rate-limit-headers.js';
import type { HeaderSource } from '../headers/write-headers.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import type { HotKeys } from '../observability/hot-keys/hot-keys.js';
import {
  rateLimitChannels,
  toOwnDecisionListener,
  type DecisionEvent,
  type DecisionResult,
} from '../observability/rate-limit-channels.js';
import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import type { DecisionInput } from '../policies/call-steps.js';
import type { RateLimitCall } from '../rate-limit-call.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type { ConsumeResult, RateLimitCheck } from '../store/rate-limit-store.interface.js';
import type { RequestResponse } from '../transports/rate-limit-transport.interface.js';

/**
 * One evaluation of a route's limits (`from`..`to`), from its checks to its
 * decision: what the guard hands between the store call and the decision
 * steps (`settle` passes it through, so no closure is allocated per call).
 *
 * @internal
 */
export interface PendingDecision extends DecisionInput {
  readonly context: ExecutionContext;
  readonly route: CompiledRoute;
  readonly from: number;
  readonly to: number;
  /** The limits evaluated, as the headers report them (adaptive and dynamic ones as they are for this call). */
  limits: readonly HeaderLimit[];
  readonly exchange: RequestResponse;
  /** The call's record (absent on a route that needs none after the guard); its `split` is set on routes evaluated in two parts. */
  readonly call: RateLimitCall | undefined;
  checks: readonly RateLimitCheck[];
  /** The clock reading the store decided at. */
  now: number;
}

/** Placeholder until the checks are built (no array allocated for it). */
export const NO_CHECKS: readonly RateLimitCheck[] = Object.freeze([]);

/** What the evaluation charged so far: this part's checks, and the first part's on a split route. */
export function chargedSoFar(pending: PendingDecision): readonly RateLimitCheck[] {
  const early = pending.call?.early;
  return early && early.checks !== pending.checks
    ? [...early.checks, ...pending.checks]
    : pending.checks;
}

/**
 * The headers of a decided evaluation: every limit that decided, both parts
 * of a split route, or this part alone when the first had nothing to say (no
 * limits, or a store failure admitted it).
 */
export function decidedHeaders(pending: PendingDecision, result: ConsumeResult): HeaderSource {
  const early = pending.call?.early;
  if (early || pending.from === 0) {
    const decisions = early ? [...early.decisions, ...result.decisions] : result.decisions;
    return { limits: pending.limits, decisions, policy: pending.route.staticPolicy };
  }
  return {
    limits: pending.limits.slice(pending.from),
    decisions: result.decisions,
    policy: undefined,
  };
}

/** Each limit's check for an admitted call, in order; `undefined` when the first part charged nothing. */
export function chargedPerLimit(pending: PendingDecision): readonly RateLimitCheck[] | undefined {
  const early = pending.call?.early;
  if (early) return [...early.checks, ...pending.checks];
  return pending.from === 0 ? pending.checks : undefined;
}

/** The callers of the limits that denied, for the hot-keys summary: the bucket key without the limit's namespace. */
export function recordDenied(
  hotKeys: HotKeys,
  pending: PendingDecision,
  result: ConsumeResult,
): void {
  const { route, checks, from } = pending;
  result.decisions.forEach((decision, i) => {
    if (decision.allowed) return;
    const limit = route.limits[from + i]!;
    hotKeys.denied(
      limit.name,
      checks[i]!.identity ?? checks[i]!.key.slice(limit.namespace.length),
      pending.now,
    );
  });
}

// Shared by every event without decisions (a store failure): frozen, since subscribers receive it.
const NO_DECISIONS: readonly RateLimitDecision[] = Object.freeze([]);

/**
 * The evaluation to the module's exporter, then on the decision channel
 * (callers check `decisionsWatched()` first): the event object is made only
 * for channel subscribers.
 */
export function publishDecision(
  pending: PendingDecision,
  owner: RateLimitOwner,
  result: DecisionResult,
  answer?: ConsumeResult,
): void {
  const { route } = pending;
  const whole = pending.from === 0 && pending.to === route.limits.length;
  // The whole route (the common case) publishes the arrays compiled with it; one part of a split route slices them.
  const limits = whole ? route.limitNames : route.limitNames.slice(pending.from, pending.to);
  const bursts = whole ? route.limitBursts : route.limitBursts.slice(pending.from, pending.to);
  const decisions = answer?.decisions ?? NO_DECISIONS;
  const transport = route.transport.type;
  toOwnDecisionListener(owner, limits, transport, result, decisions, bursts);
  if (!rateLimitChannels.decision.hasSubscribers) return;
  rateLimitChannels.decision.publish({
    route: route.routeId,
    transport,
    limits,
    bursts,
    result,
    decisions,
    owner,
    // A reference, not a copy: what subscribers that need keys (RateLimitEvents) read.
    checks: pending.checks === NO_CHECKS ? undefined : pending.checks,
  } satisfies DecisionEvent);
}
