import type { ExecutionContext } from '@nestjs/common';
import type { RateLimitClock } from '../clock.js';
import type { RequestLike } from '../keys/key-strategy.js';
import { costOf } from '../limits/limit-cost.js';
import { bucketCheck } from '../store/bucket-key.js';
import { BurstLog } from '../observability/burst-log.js';
import { decisionsWatched, publishDecisionEvent } from '../observability/rate-limit-channels.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import type { RateLimitEngine } from '../engine/rate-limit-engine.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type {
  ConsumeResult,
  MaybePromise,
  RateLimitCheck,
} from '../store/rate-limit-store.interface.js';
import { isPromiseLike } from '../util/maybe-promise.js';

/** How long a burst of would-be denials lasts when the store gives no retry time (ms). */
const DEFAULT_QUIET_MS = 60_000;

/**
 * Shadow limits (`shadow: true`): decided and charged as usual once the
 * route's other limits admitted the request, but never denying it. A
 * would-be denial is published on the decision channel as `'shadow-denied'`
 * and said once per burst in the log, with the count when the burst ends.
 *
 * Nothing here can fail or delay the request: the decision is not awaited,
 * and a key that cannot be computed or a store that fails only skips it.
 *
 * @internal
 */
export class ShadowLimits {
  private readonly log: BurstLog;

  constructor(
    private readonly engine: RateLimitEngine,
    private readonly clock: RateLimitClock,
    warn: (message: string) => void,
    private readonly owner?: RateLimitOwner,
  ) {
    this.log = new BurstLog(warn);
  }

  /** Decide the route's shadow limits for an admitted request. */
  evaluate(context: ExecutionContext, route: CompiledRoute, request: unknown): void {
    let checks: MaybePromise<RateLimitCheck[]>;
    try {
      checks = this.checks(context, route, request as RequestLike | undefined);
    } catch {
      return; // a key or cost that cannot be computed: the enforcing path reports such errors
    }
    if (isPromiseLike(checks)) checks.then((built) => this.decide(route, built), ignore);
    else this.decide(route, checks);
  }

  /** Say what the open bursts counted (the module is shutting down). */
  flush(): void {
    this.log.flush();
  }

  private checks(
    context: ExecutionContext,
    route: CompiledRoute,
    request: RequestLike | undefined,
  ): MaybePromise<RateLimitCheck[]> {
    const limits = route.shadowLimits;
    const identities = limits.map((limit) => limit.identify(context, request));
    const build = (keys: readonly string[]) =>
      limits.map((limit, i): RateLimitCheck =>
        bucketCheck(limit.namespace, keys[i]!, limit.bucket, costOf(limit, context)),
      );
    if (!identities.some(isPromiseLike)) return build(identities as string[]);
    return Promise.all(identities).then(build);
  }

  private decide(route: CompiledRoute, checks: RateLimitCheck[]): void {
    let answer: MaybePromise<ConsumeResult>;
    try {
      answer = this.engine.consume({ checks, now: this.clock.now() }, 'open');
    } catch {
      return; // a store failure: logged by the engine, nothing to shadow
    }
    if (isPromiseLike(answer)) answer.then((result) => this.report(route, checks, result), ignore);
    else this.report(route, checks, answer);
  }

  private report(
    route: CompiledRoute,
    checks: readonly RateLimitCheck[],
    result: ConsumeResult,
  ): void {
    if (result.allowed) return;
    const denied = route.shadowLimits
      .filter((_limit, i) => result.decisions[i]?.allowed === false)
      .map((limit) => limit.name);
    if (decisionsWatched()) {
      // `limits` and `decisions` stay parallel: the denied shadow limits and their decisions.
      const decisions = result.decisions.filter((decision) => !decision.allowed);
      const deniedChecks = checks.filter((_check, i) => result.decisions[i]?.allowed === false);
      publishDecisionEvent({
        route: route.routeId,
        transport: route.transport.type,
        limits: denied,
        result: 'shadow-denied',
        decisions,
        owner: this.owner,
        checks: deniedChecks,
      });
    }
    let retryMs = 0;
    for (const decision of result.decisions)
      if (!decision.allowed) retryMs = Math.max(retryMs, decision.retryAfterMs);
    for (const name of denied) {
      this.log.occurred(
        `${route.routeId}:${name}`,
        Number.isFinite(retryMs) && retryMs > 0 ? retryMs : DEFAULT_QUIET_MS,
        () => ({
          first: `RateLimit: ${route.routeId}, limit "${name}" (shadow): would have denied a request; admitted. Later ones are counted and said when this burst ends.`,
          summary: (count) =>
            `RateLimit: ${route.routeId}, limit "${name}" (shadow): ${count} request(s) would have been denied in the last burst.`,
        }),
      );
    }
  }
}

function ignore(): void {}
