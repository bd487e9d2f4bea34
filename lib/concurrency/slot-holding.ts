import type { ExecutionContext } from '@nestjs/common';
import type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
import { policyHeader, type HeaderLimit } from '../headers/rate-limit-headers.js';
import type { HeaderSource } from '../headers/write-headers.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import {
  decisionsWatched,
  publishDecisionEvent,
  type DecisionResult,
} from '../observability/rate-limit-channels.js';
import type { SlotAdmission } from '../rate-limit-call.js';
import type { AdaptiveTicket } from './adaptive/adaptive-concurrency.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type { ConcurrencySlots } from '../store/concurrency-slots.interface.js';
import type { BucketRef } from '../store/rate-limit-store.interface.js';
import type {
  RateLimitDenial,
  RequestResponse,
} from '../transports/rate-limit-transport.interface.js';

/** One call's work in progress: the slots it holds so far and what they decided. */
export interface Holding {
  readonly context: ExecutionContext;
  readonly route: CompiledRoute;
  readonly exchange: RequestResponse;
  readonly admission: SlotAdmission;
  readonly slots: ConcurrencySlots;
  /**
   * Slots to release when the call ends: those taken, and those whose
   * acquisition failed (timed out: Redis may still run it when it wakes).
   */
  readonly held: {
    readonly key: string;
    readonly id: string;
    readonly leaseMs: number;
    /** An adaptive limit's slot: counted in the process, given back through it. */
    readonly ticket?: AdaptiveTicket;
  }[];
  /** Each decided limit's key, parallel to `decisions`, for the decision channel's `checks`. */
  readonly keys: BucketRef[];
  readonly limits: HeaderLimit[];
  readonly decisions: RateLimitDecision[];
  /** A slot's store failed and its fail mode admitted the call without it. */
  failedOpen: boolean;
  /** Throws the denial (the guard's `throwRateLimitException`, or the transport's error). */
  readonly deny: (denial: RateLimitDenial) => never;
}

/** The rate limits' headers, with a member per concurrency limit that decided. */
export function holdingHeaders(holding: Holding): HeaderSource {
  const rate = holding.admission.source;
  if (rate === undefined || rate.limits.length === 0)
    return { limits: holding.limits, decisions: holding.decisions, policy: undefined };
  const own = policyHeader(holding.limits);
  const policy = rate.policy === undefined || own === '' ? undefined : `${rate.policy}, ${own}`;
  return {
    limits: [...rate.limits, ...holding.limits],
    decisions: [...rate.decisions, ...holding.decisions],
    policy,
  };
}

/**
 * Concurrency decisions on the decision channel, as their own limits
 * (counted per limit name like any other; the call's rate limits were
 * published by the guard). A denial names the limits decided up to the one
 * that refused; a store failure, every limit.
 */
export function publishSlotDecision(
  route: CompiledRoute,
  owner: RateLimitOwner,
  result: DecisionResult,
  holding: Holding | undefined,
): void {
  if (!decisionsWatched()) return;
  const decided = result === 'admitted' || result === 'denied';
  const count = result === 'denied' ? holding!.decisions.length : route.concurrency.length;
  const whole = count === route.concurrency.length;
  publishDecisionEvent({
    route: route.routeId,
    transport: route.transport.type,
    limits: whole ? route.concurrencyNames : route.concurrencyNames.slice(0, count),
    bursts: whole ? route.concurrencyBursts : route.concurrencyBursts.slice(0, count),
    result,
    decisions: decided ? holding!.decisions : [],
    owner,
    checks: decided ? holding!.keys : undefined,
  });
}

/** The part of a Node `ServerResponse` (Express's response, Fastify's `reply.raw`) watched for its end. */
interface NodeResponse {
  readonly closed?: boolean;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/**
 * Calls the listener once the HTTP response closes, sent or not; at once if
 * it has closed already (the client left while the slots were being taken).
 */
export function onResponseClosed(
  response: unknown,
): ((listener: () => void) => () => void) | undefined {
  const raw = ((response as { raw?: NodeResponse } | undefined)?.raw ?? response) as
    NodeResponse | undefined;
  if (raw === undefined || typeof raw.once !== 'function') return undefined;
  return (listener) => {
    if (raw.closed === true) {
      listener();
      return () => undefined;
    }
    raw.once('close', listener);
    return () => raw.off('close', listener);
  };
}
