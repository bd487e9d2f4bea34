import type { ExecutionContext } from '@nestjs/common';
import type { AdaptiveRateProvider } from '../adaptive/adaptive-rate.provider.js';
import { EffectiveBuckets } from '../adaptive/effective-buckets.js';
import type { RateLimitClock } from '../clock.js';
import type { SlotGate } from '../concurrency/slot-gate.js';
import type { HeaderSource } from '../headers/write-headers.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import { BurstLog } from '../observability/burst-log.js';
import { decisionsWatched } from '../observability/rate-limit-channels.js';
import type { DecisionServices } from '../policies/call-steps.js';
import { TokenWaits } from '../policies/delay/token-waits.js';
import {
  awaitCallBuckets,
  callBuckets,
  reportDynamicFailure,
  type CallBuckets,
} from '../policies/dynamic-limit.js';
import { ShadowLimits } from '../policies/shadow.js';
import { openCall, type RateLimitCall } from '../rate-limit-call.js';
import { buildChecks } from '../routes/build-checks.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type {
  ConsumeResult,
  MaybePromise,
  RateLimitCheck,
  StoreLimit,
} from '../store/rate-limit-store.interface.js';
import { answerAdmitted, answerDenied } from '../transports/call-answer.js';
import type {
  RateLimitDenial,
  RateLimitTransport,
  RequestResponse,
} from '../transports/rate-limit-transport.interface.js';
import { isPromiseLike, settle } from '../util/maybe-promise.js';
import {
  chargedPerLimit,
  chargedSoFar,
  decidedHeaders,
  NO_CHECKS,
  publishDecision,
  recordDenied,
  type PendingDecision,
} from './pending-decision.js';
import type { RateLimitEngine } from './rate-limit-engine.js';

/** What `RateLimitGuard.onStoreFailure` is told about a store failure. */
export interface RateLimitStoreFailure {
  /** The strictest fail mode of the limits that applied. */
  readonly failMode: FailMode;
  /** What the store threw or rejected with (a `RateLimitStoreError`). */
  readonly error: unknown;
  /** The route's transport: {@link RateLimitTransport.unavailableError} is what `'closed'` throws. */
  readonly transport: RateLimitTransport;
}

/**
 * The guard's extension points, as the evaluation calls them: the guard
 * passes functions that call its protected methods, so that a subclass's
 * overrides (`getRequestResponse`, `throwRateLimitException`,
 * `onStoreFailure`) are what every evaluation uses.
 */
export interface GuardHooks {
  requestResponse(context: ExecutionContext, transport: RateLimitTransport): RequestResponse;
  throwDenial(context: ExecutionContext, denial: RateLimitDenial): never;
  storeFailure(context: ExecutionContext, failure: RateLimitStoreFailure): boolean;
}

/** What the evaluation works with: the guard's collaborators, as Nest injects them into it. */
export interface EvaluationDeps {
  readonly engine: RateLimitEngine;
  readonly adaptive: AdaptiveRateProvider;
  readonly options: ResolvedModuleOptions;
  readonly clock: RateLimitClock;
  readonly slots: SlotGate;
}

/**
 * A route's limits evaluated for one call, for `RateLimitGuard` (which
 * decides what to evaluate: skips, a split around the route's own guards):
 * build one check per limit, ask the store once for all of them
 * (all-or-nothing), run the route's decision steps (`blockDuration`,
 * `maxDelay`), then admit (headers written here, or left to
 * `RateLimitInterceptor` where it is bound) or deny through the route's
 * transport. Steps that may answer with a promise go through one helper
 * (`settle`), so a synchronous store (memory) creates no promise at all.
 *
 * @internal
 */
export class RouteEvaluation {
  /** The buckets of routes with adaptive limits, as their controllers set them now. */
  private readonly effective: EffectiveBuckets;
  /** What the policies' decision steps use. */
  private readonly services: DecisionServices;
  /** Limits in shadow mode, decided after the others admitted. */
  private readonly shadow: ShadowLimits;
  /** Rate and burst functions that failed, said once per burst. */
  private readonly dynamicErrors: BurstLog;
  /** Requests waiting for the token they reserved (`maxDelay`). */
  private readonly waits: TokenWaits;
  private readonly engine: RateLimitEngine;
  private readonly options: ResolvedModuleOptions;
  private readonly clock: RateLimitClock;
  private readonly slots: SlotGate;
  /** Created once: `settle` callbacks, so that no closure is allocated per request. */
  private readonly onDecided = (
    pending: PendingDecision,
    result: ConsumeResult,
  ): MaybePromise<boolean> => this.decide(pending, result);
  private readonly onFailed = (pending: PendingDecision, error: unknown): MaybePromise<boolean> =>
    this.storeFailed(pending, error);

  constructor(
    deps: EvaluationDeps,
    private readonly hooks: GuardHooks,
  ) {
    const { engine, options, clock } = deps;
    this.engine = engine;
    this.options = options;
    this.clock = clock;
    this.slots = deps.slots;
    this.shadow = new ShadowLimits(engine, clock, options.warn, options.owner);
    this.dynamicErrors = new BurstLog(options.warn);
    this.waits = new TokenWaits(engine, options.warn);
    this.effective = new EffectiveBuckets(deps.adaptive);
    this.services = { engine, owner: options.owner };
  }

  /** The module is shutting down: what the shadow limits counted in their open bursts is said. */
  close(): void {
    this.shadow.flush();
    this.dynamicErrors.flush();
    this.waits.close();
  }

  /** A route (or a call's narrowing of one) with nothing to enforce: admitted; its shadow limits are decided all the same. */
  onlyShadow(context: ExecutionContext, route: CompiledRoute): MaybePromise<boolean> {
    if (route.shadowLimits.length > 0)
      this.shadow.evaluate(context, route, route.transport.requestResponse(context).request);
    return route.concurrency.length === 0
      ? true
      : this.takeSlots(
          context,
          route,
          this.hooks.requestResponse(context, route.transport),
          NO_CHECKS,
          undefined,
        );
  }

  /**
   * The call passed the rate limits of a route with concurrency limits: on
   * HTTP the slots are taken now (a refusal is a 429 whatever the handler:
   * see `SlotGate.takeInGuard`); elsewhere by the interceptor, after the
   * route's own guards. `charged` is refunded if a slot is refused.
   */
  private takeSlots(
    context: ExecutionContext,
    route: CompiledRoute,
    exchange: RequestResponse,
    charged: readonly RateLimitCheck[],
    source: HeaderSource | undefined,
  ): MaybePromise<boolean> {
    if (route.transport.type !== 'http') {
      openCall(context, route).slots = { charged, source };
      return true;
    }
    return this.slots.takeInGuard(context, route, exchange, { charged, source }, (denial) =>
      this.hooks.throwDenial(context, denial),
    );
  }

  /** Charge the limits `from`..`to` of the route: keys first (a key function may answer with a promise), then the store. */
  evaluate(
    context: ExecutionContext,
    route: CompiledRoute,
    from: number,
    to: number,
    call: RateLimitCall | undefined,
  ): MaybePromise<boolean> {
    const exchange = this.hooks.requestResponse(context, route.transport);
    const effective = route.staticPolicy === undefined ? this.effective.of(route) : undefined;
    const buckets = effective?.buckets ?? route.buckets;
    const pending: PendingDecision = {
      context,
      route,
      from,
      to,
      limits: effective?.limits ?? route.limits,
      exchange,
      call,
      checks: NO_CHECKS,
      now: 0,
      waitMs: 0,
    };
    if (route.dynamic)
      return this.evaluateDynamic(
        pending,
        call?.earlyBuckets ?? { limits: pending.limits, buckets },
      );
    return this.charge(pending, buckets);
  }

  private charge(pending: PendingDecision, buckets: readonly StoreLimit[]): MaybePromise<boolean> {
    const checks = buildChecks(
      pending.context,
      pending.route,
      pending.from,
      pending.to,
      pending.exchange.request,
      buckets,
    );
    if (!isPromiseLike(checks)) return this.consume(pending, checks);
    return checks.then((built) => this.consume(pending, built));
  }

  /**
   * A route with limits whose rate or burst is a function of the call: their
   * buckets for this call first. A function that throws, rejects or gives a
   * value no bucket can have is decided like a store failure (the route's
   * fail mode), said once per burst.
   */
  private evaluateDynamic(pending: PendingDecision, base: CallBuckets): MaybePromise<boolean> {
    let buckets: MaybePromise<CallBuckets>;
    try {
      buckets = callBuckets(pending.context, pending.route.limits, pending.from, pending.to, base);
    } catch (error) {
      return this.dynamicFailed(pending, error);
    }
    const charge = (call: CallBuckets) => {
      pending.limits = call.limits;
      if (pending.call?.split) pending.call.earlyBuckets = call;
      return this.charge(pending, call.buckets);
    };
    if (!isPromiseLike(buckets)) return charge(buckets);
    // A function that never answers must not hold the request: a deadline, then the fail mode.
    return awaitCallBuckets(buckets, this.clock).then(charge, (error: unknown) =>
      this.dynamicFailed(pending, error),
    );
  }

  private dynamicFailed(pending: PendingDecision, error: unknown): MaybePromise<boolean> {
    reportDynamicFailure(this.dynamicErrors, pending.route.routeId, error);
    return this.storeFailed(pending, error);
  }

  private consume(
    pending: PendingDecision,
    checks: readonly RateLimitCheck[],
  ): MaybePromise<boolean> {
    pending.checks = checks;
    pending.now = this.clock.now();
    let answer: MaybePromise<ConsumeResult>;
    try {
      answer = this.engine.consume({ checks, now: pending.now }, pending.route.failMode);
    } catch (error) {
      return this.storeFailed(pending, error);
    }
    // A waiting admission (maxDelay) is a promise inside the store's: promises flatten.
    return settle(answer, pending, this.onDecided, this.onFailed) as MaybePromise<boolean>;
  }

  private decide(
    pending: PendingDecision,
    answer: ConsumeResult,
    firstStep = 0,
  ): MaybePromise<boolean> {
    const steps = pending.route.decisionSteps;
    let result = answer;
    for (let i = firstStep; i < steps.length; i++) {
      const next = steps[i]!(pending, result, this.services);
      // A step that asks the store (a block on Redis): the rest of the decision when it answers.
      if (isPromiseLike(next)) return next.then((settled) => this.decide(pending, settled, i + 1));
      result = next;
    }
    return this.decided(pending, result);
  }

  private decided(pending: PendingDecision, decision: ConsumeResult): MaybePromise<boolean> {
    const { route, exchange, call } = pending;
    const split = call?.split === undefined ? undefined : call;
    let result = decision;
    const wait = pending.waitMs;
    const queued = wait > 0 ? this.waits.enqueue(wait, pending.waitKey) : undefined;
    if (wait > 0 && queued === undefined)
      result = this.waits.refuse(route, result, wait, chargedSoFar(pending), pending.waitKey);
    if (decisionsWatched())
      publishDecision(pending, this.options.owner, result.allowed ? 'admitted' : 'denied', result);
    if (split !== undefined && pending.to < route.limits.length) {
      // First of two parts: the headers wait for the second, which reports every limit.
      if (result.allowed) split.early = { checks: pending.checks, decisions: result.decisions };
      else {
        if (this.engine.hotKeys !== undefined) recordDenied(this.engine.hotKeys, pending, result);
        this.deny(pending, {
          limits: pending.limits.slice(0, pending.to),
          decisions: result.decisions,
          policy: undefined,
        });
      }
      return queued === undefined
        ? true
        : this.waits.waitFor(route, exchange, queued, chargedSoFar(pending));
    }
    const early = split?.early;
    if (early && !result.allowed) this.engine.refundCharged(early.checks); // all or nothing, across both parts
    const source = decidedHeaders(pending, result);
    if (!result.allowed) {
      if (this.engine.hotKeys !== undefined) recordDenied(this.engine.hotKeys, pending, result);
      return this.deny(pending, source);
    }
    // For the interceptor's work after the handler: each limit's check (bucket key and cost).
    if (route.reportsOutcome && call) call.charged = chargedPerLimit(pending);
    if (route.shadowLimits.length > 0)
      this.shadow.evaluate(pending.context, route, exchange.request);
    // Concurrency limits: their slots, then every limit's headers (no maxDelay on such routes: refused at start-up).
    if (route.concurrency.length > 0)
      return this.takeSlots(pending.context, route, exchange, chargedSoFar(pending), source);
    if (route.interceptorBound && call) call.headers = source;
    else answerAdmitted(route.transport, exchange.response, this.options.headers, source);
    return queued === undefined
      ? true
      : this.waits.waitFor(route, exchange, queued, chargedSoFar(pending));
  }

  private deny(pending: PendingDecision, source: HeaderSource): never {
    const { route, exchange } = pending;
    const denial = answerDenied(route.transport, exchange.response, this.options.headers, source);
    return this.hooks.throwDenial(pending.context, denial);
  }

  private storeFailed(pending: PendingDecision, error: unknown): MaybePromise<boolean> {
    const { route } = pending;
    if (decisionsWatched())
      publishDecision(
        pending,
        this.options.owner,
        route.failMode === 'closed' ? 'fail-closed' : 'fail-open',
      );
    const admitted = this.hooks.storeFailure(pending.context, {
      failMode: route.failMode,
      error,
      transport: route.transport,
    });
    if (!admitted || route.concurrency.length === 0) return admitted;
    return this.takeSlots(
      pending.context,
      route,
      pending.exchange,
      pending.call?.early?.checks ?? NO_CHECKS,
      undefined,
    );
  }
}
