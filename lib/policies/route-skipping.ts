import { Logger, type ExecutionContext } from '@nestjs/common';
import type { AddressedRequest } from '../interfaces/request-address.interface.js';
import { decisionsWatched, publishDecisionEvent } from '../observability/rate-limit-channels.js';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import { rateLimitCall } from '../rate-limit-call.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type { MaybePromise } from '../store/rate-limit-store.interface.js';
import { narrowRoute } from '../routes/narrow-route.js';
import { runSkip, skippedLimits } from './skip.js';

type Start = (context: ExecutionContext, route: CompiledRoute) => MaybePromise<boolean>;

/**
 * The guard's first step where anything may be skipped: the module's
 * `allowList` and `skip` (no limit applies), then each limit's `skip` (the
 * route narrowed to the others). Synchronous while every predicate is. A
 * skipped call is published on the decision channel as `'skipped'`, with the
 * names of the limits it skipped.
 *
 * @internal
 */
export class RouteSkipping {
  /** The module skips or allow-lists: every route goes through {@link narrow}. */
  readonly active: boolean;
  private readonly logger = new Logger('RateLimit');
  /** Predicates that threw, already said (by limit name; `''` for the module's). */
  private readonly failed = new Set<string>();

  constructor(
    private readonly options: Pick<ResolvedModuleOptions, 'skip' | 'allowed'> & {
      readonly owner?: ResolvedModuleOptions['owner'];
    },
  ) {
    this.active = options.skip !== undefined || options.allowed !== undefined;
  }

  /** Evaluate `route` through `start`, without the limits this call skips. */
  narrow(context: ExecutionContext, route: CompiledRoute, start: Start): MaybePromise<boolean> {
    const { allowed, skip } = this.options;
    if (
      allowed !== undefined &&
      allowed(route.transport.requestResponse(context).request as AddressedRequest | undefined)
    ) {
      return this.skipAll(route);
    }
    const whole = skip === undefined ? false : runSkip(skip, context, this.reportModuleError);
    if (whole === true) return this.skipAll(route);
    if (whole === false) return this.byLimit(context, route, start);
    return whole.then((skipped) =>
      skipped ? this.skipAll(route) : this.byLimit(context, route, start),
    );
  }

  private byLimit(
    context: ExecutionContext,
    route: CompiledRoute,
    start: Start,
  ): MaybePromise<boolean> {
    if (!route.skips) return start(context, route);
    const mask = skippedLimits(route.limits, context, this.reportLimitError);
    if (typeof mask === 'number') return this.startNarrowed(context, route, mask, start);
    return mask.then((resolved) => this.startNarrowed(context, route, resolved, start));
  }

  private startNarrowed(
    context: ExecutionContext,
    route: CompiledRoute,
    mask: number,
    start: Start,
  ): MaybePromise<boolean> {
    if (mask === 0) return start(context, route);
    publishSkipped(
      route,
      route.limits.filter((_limit, i) => (mask & (1 << i)) !== 0).map((limit) => limit.name),
      this.options.owner,
    );
    const narrowed = narrowRoute(route, mask);
    // What the interceptor then works with: the narrowed route's checks and headers.
    const call = rateLimitCall(context);
    if (call) call.route = narrowed;
    return start(context, narrowed);
  }

  private skipAll(route: CompiledRoute): true {
    publishSkipped(
      route,
      route.limits.map((limit) => limit.name),
      this.options.owner,
    );
    return true;
  }

  private readonly reportModuleError = (error: unknown): void =>
    this.report('', 'the module skip', error);
  private readonly reportLimitError = (limitName: string, error: unknown): void =>
    this.report(limitName, `limit "${limitName}": skip`, error);

  /** A predicate that throws cannot stop the limiter from limiting: the limit applies, and the log says so once. */
  private report(id: string, what: string, error: unknown): void {
    if (this.failed.has(id)) return;
    this.failed.add(id);
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.error(
      `RateLimit: ${what} threw (${reason}); the limit applies to such calls. Said once.`,
    );
  }
}

function publishSkipped(
  route: CompiledRoute,
  limits: readonly string[],
  owner: RateLimitOwner | undefined,
): void {
  if (!decisionsWatched()) return;
  publishDecisionEvent({
    route: route.routeId,
    transport: route.transport.type,
    limits,
    result: 'skipped',
    decisions: [],
    owner,
  });
}
