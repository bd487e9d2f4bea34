import type { MaybePromise } from '../../store/rate-limit-store.interface.js';
import { isPromiseLike } from '../../util/maybe-promise.js';
import type { ResolvedConcurrencyLimit } from '../resolve-concurrency-limit.js';
import { onResponseClosed, type Holding } from '../slot-holding.js';
import type { AdaptiveAnswer } from './adaptive-concurrency.js';
import type { AdaptiveConcurrencyLimits } from './adaptive-concurrency-limits.js';

/** What taking a ticket needs of `SlotGate`: the process's limiters, and its way of refusing a call. */
export interface TicketGate {
  readonly limits: AdaptiveConcurrencyLimits;
  /** The call refused by this limit: what it took goes back, the denial is answered. */
  refuse(holding: Holding, retryAfterMs: number): never;
  /** A partition function that threw: what the call took goes back, the error goes on. */
  giveBackAndThrow(holding: Holding, error: unknown): never;
}

/**
 * An adaptive limit's slot for one call, counted in the process (never in
 * the store): a ticket at once, or after the backlog's wait (a caller that
 * leaves while waiting takes nothing and is refused like a full backlog).
 * The ticket joins the call's held slots; `SlotGate` gives it back with them,
 * telling the limiter whether the call failed ({@link callFailed}).
 */
export function takeAdaptiveTicket(
  gate: TicketGate,
  holding: Holding,
  limit: ResolvedConcurrencyLimit,
  key: string,
): MaybePromise<void> {
  const adaptive = limit.adaptive!;
  let partition: number;
  try {
    const answered = adaptive.partitionOf(holding.context);
    partition = adaptive.config.partitions.length === 0 ? 0 : adaptive.indexOf(answered);
    if (partition < 0) partition = gate.limits.unknownPartition(limit, answered);
  } catch (error) {
    return gate.giveBackAndThrow(holding, error);
  }
  const { route, exchange } = holding;
  const watch =
    onResponseClosed(exchange.response) ??
    route.transport.onClientGone?.bind(route.transport, exchange);
  const answer = gate.limits.limiter(limit).acquire(key, partition, watch);
  if (isPromiseLike(answer))
    return answer.then((settled) => ticketDecided(gate, holding, limit, key, settled));
  return ticketDecided(gate, holding, limit, key, answer);
}

/** The limiter's answer recorded on the call: the limit in force for its headers, the ticket held, or the refusal. */
function ticketDecided(
  gate: TicketGate,
  holding: Holding,
  limit: ResolvedConcurrencyLimit,
  key: string,
  answer: AdaptiveAnswer,
): void {
  const header = { ...limit.header, rate: answer.limit, burst: answer.limit };
  holding.limits.push(header);
  holding.keys.push({ key, limit: { ...limit.shape, rate: answer.limit, burst: answer.limit } });
  if (answer.allowed) {
    holding.held.push({ key, id: '', leaseMs: limit.leaseMs, ticket: answer.ticket });
    holding.decisions.push({
      allowed: true,
      remaining: Math.max(0, answer.limit - answer.inFlight),
      retryAfterMs: 0,
      resetMs: 0,
    });
    return;
  }
  gate.refuse(holding, answer.retryAfterMs);
}

/**
 * Whether a handler's end counts as a failure for an adaptive limit: it
 * threw, other than an error with a status below 500 (a 4xx says nothing of
 * the downstream). What it answered without throwing is never a failure
 * (docs/concurrency.md, "What counts as a failure").
 */
export function callFailed(error: unknown): boolean {
  if (error === undefined) return false;
  const status = (error as { getStatus?: () => unknown }).getStatus?.();
  return !(typeof status === 'number' && status < 500);
}
