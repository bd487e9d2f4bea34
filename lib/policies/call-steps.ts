import type { ExecutionContext } from '@nestjs/common';
import type { AdaptiveRateProvider } from '../adaptive/adaptive-rate.provider.js';
import type { RateLimitEngine } from '../engine/rate-limit-engine.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import type {
  ConsumeResult,
  MaybePromise,
  RateLimitCheck,
} from '../store/rate-limit-store.interface.js';

/**
 * The points of a call where a policy acts, besides its start-up part
 * (`LimitPolicy.resolve`): on the store's decision, in the guard, and after
 * the handler, in `RateLimitInterceptor`. A policy declares the steps it has
 * (`LimitPolicy.onDecision`, `LimitPolicy.afterHandler`) and which limits
 * they apply to (`LimitPolicy.appliesTo`); each compiled route lists the
 * steps of its limits (`routes/enforced-limits.ts`), and the guard and the
 * interceptor run the list. (What acts before the store, `skip` and rate or
 * burst functions, changes which checks are built and stays in the guard's path.)
 */

/** One evaluation as the decision steps see it: the limits `from` on were charged `checks` at `now`. */
export interface DecisionInput {
  readonly route: {
    readonly routeId: string;
    readonly limits: readonly ResolvedLimit[];
    readonly transport: { readonly type: string };
  };
  readonly from: number;
  readonly checks: readonly RateLimitCheck[];
  readonly now: number;
  /** Set by a step that makes an admitted request wait for its tokens (`maxDelay`): how long, in ms. */
  waitMs: number;
  /** With `waitMs`: the bucket key it waits for (the longest wait's), for the queue's per-key cap. */
  waitKey?: string;
}

/** What a decision step may use. */
export interface DecisionServices {
  readonly engine: RateLimitEngine;
  readonly owner: RateLimitOwner | undefined;
}

/**
 * Turns the store's answer into the one the call gets (a denial may become a
 * block; an admission a wait). A promise only when the step must ask the
 * store (a block on Redis); it never rejects.
 */
export type DecisionStep = (
  input: DecisionInput,
  result: ConsumeResult,
  services: DecisionServices,
) => MaybePromise<ConsumeResult>;

/** An admitted call's outcome, as the steps after the handler see it. */
export interface HandlerOutcome {
  readonly context: ExecutionContext;
  /** The route's limits as the call applied them (narrowed by `skip`). */
  readonly limits: readonly ResolvedLimit[];
  /** Each limit's check as the guard charged it; absent when the store failed and the call was admitted anyway. */
  readonly checks: readonly RateLimitCheck[] | undefined;
  readonly response: unknown;
  /** What the handler returned, or for a stream what it emitted last (`settle`); `undefined` when it threw or emitted nothing. */
  readonly result: unknown;
  /** What the handler threw or its observable errored with; `undefined` when it completed. */
  readonly error: unknown;
  /** The transport's verdict: the handler failed (threw, or a status the transport counts as a failure). */
  readonly failed: boolean;
  /** Milliseconds from the handler's start to its outcome (never negative). */
  readonly latencyMs: number;
}

/** What a step after the handler may use. */
export interface AfterHandlerServices {
  readonly engine: RateLimitEngine;
  readonly adaptive: AdaptiveRateProvider;
  /** Said once per limit: a user predicate threw (the step decided the safe way). */
  readonly onPredicateError: (limitName: string, error: unknown) => void;
}

/** Acts on an admitted call's outcome (give tokens back, report to a controller). Never throws. */
export type AfterHandlerStep = (outcome: HandlerOutcome, services: AfterHandlerServices) => void;
