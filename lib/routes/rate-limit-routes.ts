import {
  Inject,
  Injectable,
  type ExecutionContext,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import { AdaptiveRateProvider } from '../adaptive/adaptive-rate.provider.js';
import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { mergeLimits, type SkipDeclaration } from '../limits/merge-limits.js';
import { resolveLimit, type LimitContext } from '../limits/resolve-limit.js';
import {
  isConcurrencyLimit,
  resolveConcurrencyLimit,
} from '../concurrency/resolve-concurrency-limit.js';
import {
  RATE_LIMIT_INTERCEPTOR_BRAND,
  RATE_LIMIT_METADATA,
  SKIP_RATE_LIMIT_METADATA,
  RESOLVED_RATE_LIMIT_OPTIONS,
} from '../rate-limit.constants.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import { describeHandler, type HandlerKind } from '../transports/handler-kind.js';
import { RateLimitTransports } from '../transports/rate-limit-transports.js';
import {
  checkFieldResolverEnhancers,
  type FieldResolverEnhancer,
  type LimitedFieldResolver,
} from '../transports/field-resolver-enhancers.js';
import type { CompiledRoute } from './compiled-route.js';
import { enforcedLimits } from './enforced-limits.js';
import { bindAfterRouteGuards, hasOwnGuards, runsAfterRouteGuards } from './after-route-guards.js';
import { bindWsExceptionFilter } from '../transports/ws-reply.js';
import { RouteIds } from './route-id.js';

type Handler = (...args: unknown[]) => unknown;

/**
 * Compiles, validates and caches the route of every handler: its limits,
 * its transport, its fail mode, and whether the interceptor writes its headers.
 *
 * Every handler (HTTP routes, resolvers, gateways, message handlers) is
 * compiled when the module initialises, so a bad limit fails the
 * application's bootstrap with a message naming the handler, the limit and
 * the option. A handler discovery could not see is compiled on first use,
 * with the transport of the context it runs in, and cached the same way; the
 * per-request cost is two `Map` lookups.
 *
 * @internal
 */
@Injectable()
export class RateLimitRoutes implements OnModuleInit {
  private readonly routes = new Map<Type, Map<Handler, CompiledRoute>>();
  private readonly routeIds = new RouteIds();

  constructor(
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly reflector: Reflector,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly adaptive: AdaptiveRateProvider,
    private readonly transports: RateLimitTransports,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * Compile every handler of every transport (controllers, resolvers,
   * gateways, message handlers), so that a bad limit fails the bootstrap
   * naming the handler, whatever calls it. The transports of the kinds found
   * are built first (they load their optional peer packages). A GraphQL
   * field resolver with limits of its own (or of its class) that Nest would
   * call without the guard fails the bootstrap too (see
   * `checkFieldResolverEnhancers`).
   */
  async onModuleInit(): Promise<void> {
    // Module-wide limits and defaults are checked even when no route uses them.
    const where = 'RateLimitModule options';
    const moduleWide = mergeLimits(
      {
        ...this.moduleDeclared(),
        classLimits: [],
        methodLimits: [],
        classSkip: undefined,
        methodSkip: undefined,
      },
      where,
    );
    for (const limit of moduleWide) {
      if (isConcurrencyLimit(limit))
        resolveConcurrencyLimit(limit, this.limitContext(where, 'module'));
      else resolveLimit(limit, this.limitContext(where, 'module'));
    }

    const handlers = [...this.handlers()];
    await this.transports.load(new Set(handlers.map(({ kind }) => kind)));
    const fields: LimitedFieldResolver[] = [];
    for (const { target, handler, kind, field } of handlers) {
      const route = this.routes.get(target)?.get(handler) ?? this.compile(target, handler, kind);
      if (field && this.declaresLimits(target, handler)) {
        const needs = fieldResolverNeeds(route);
        if (needs.length > 0) fields.push({ where: `${target.name}.${handler.name}`, needs });
      }
    }
    checkFieldResolverEnhancers(this.moduleRef, fields);
    // Every limit has been read: each deprecated name in use is said once, with its places.
    this.options.deprecations.flush();
  }

  /**
   * `@RateLimit()` on the handler or its class. Module-wide limits alone do
   * not make a field resolver refused: they apply to field resolvers only
   * where Nest runs guards on them.
   */
  private declaresLimits(target: Type, handler: Handler): boolean {
    const declared = (on: Type | Handler) =>
      (this.reflector.get<RateLimitOptions[]>(RATE_LIMIT_METADATA, on)?.length ?? 0) > 0;
    return declared(handler) || declared(target);
  }

  /** Every handler a transport calls, in controllers and providers, with its kind. */
  private *handlers(): IterableIterator<{
    readonly target: Type;
    readonly handler: Handler;
    readonly kind: HandlerKind;
    readonly field: boolean;
  }> {
    const seen = new Set<Type>();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const target = wrapper.metatype as Type | undefined;
      if (!target?.prototype || wrapper.isAlias || seen.has(target)) continue;
      seen.add(target);
      for (const method of this.scanner.getAllMethodNames(target.prototype)) {
        const handler = target.prototype[method] as Handler;
        const description =
          typeof handler === 'function' ? describeHandler(target, handler) : undefined;
        if (description !== undefined)
          yield { target, handler, kind: description.kind, field: description.field };
      }
    }
  }

  /** The compiled route of the handler about to run. */
  forContext(context: ExecutionContext): CompiledRoute {
    const controller = context.getClass();
    const handler = context.getHandler() as Handler;
    return (
      this.routes.get(controller)?.get(handler) ??
      this.compile(controller, handler, context.getType())
    );
  }

  /** Every route compiled so far, for the start-up checks. */
  *compiled(): IterableIterator<{
    readonly controller: Type;
    readonly handler: Handler;
    readonly route: CompiledRoute;
  }> {
    for (const [controller, byHandler] of this.routes) {
      for (const [handler, route] of byHandler) yield { controller, handler, route };
    }
  }

  /**
   * The `@MessagePattern` / `@EventPattern` handlers some limit applies to
   * (declared on them, their class, or module-wide), found while providers
   * are instantiated.
   */
  *limitedMessageHandlers(): IterableIterator<Handler> {
    for (const { target, handler, kind } of this.handlers()) {
      if (
        kind === 'rpc' &&
        this.declared(target, handler, `${target.name}.${handler.name}`).length > 0
      )
        yield handler;
    }
  }

  /**
   * Place the second part of the evaluation after the route's own guards on
   * every handler that has guards of its own and a limit keyed by user (see
   * {@link RateLimitAfterRouteGuards}). Runs while providers are instantiated:
   * Nest reads a handler's guards when it registers the route, before any
   * `onModuleInit`.
   */
  bindAfterRouteGuards(): void {
    const classes = [...this.discovery.getControllers(), ...this.discovery.getProviders()];
    for (const wrapper of classes) {
      const target = wrapper.metatype as Type | undefined;
      if (!target?.prototype || wrapper.isAlias) continue;
      // Gateways get no global filter from Nest: a denial from RateLimiter.enforce() needs one of its own.
      bindWsExceptionFilter(target);
      for (const method of this.scanner.getAllMethodNames(target.prototype)) {
        const handler = target.prototype[method] as Handler;
        if (typeof handler !== 'function' || !hasOwnGuards(target, handler)) continue;
        if (
          this.declared(target, handler, `${target.name}.${method}`).some(
            (limit) => this.keyedByUser(limit) && !isConcurrencyLimit(limit),
          )
        ) {
          bindAfterRouteGuards(handler);
        }
      }
    }
  }

  private compile(controller: Type, handler: Handler, transportType: string): CompiledRoute {
    const where = `${controller.name}.${handler.name}`;
    const all = this.declared(controller, handler, where);
    // Concurrency limits are taken by the interceptor, after every guard: never part of the guard's evaluation.
    const declared = all.filter((limit) => !isConcurrencyLimit(limit));
    // Limits keyed by user wait for the route's own guards when those come
    // first (bindAfterRouteGuards); the rest run in the guard, before them.
    const late = runsAfterRouteGuards(handler)
      ? declared.filter((limit) => this.keyedByUser(limit))
      : [];
    const ordered =
      late.length === 0
        ? declared
        : [...declared.filter((limit) => !late.includes(limit)), ...late];
    const routeId = this.routeIds.next(controller, handler);
    const resolved = ordered.map((limit) => resolveLimit(limit, this.limitContext(where, routeId)));
    const concurrency = all
      .filter(isConcurrencyLimit)
      .map((limit) => resolveConcurrencyLimit(limit, this.limitContext(where, routeId)));
    for (const limit of resolved) {
      if (limit.adaptive) this.adaptive.register(limit.name, limit.adaptive, limit);
    }
    // Shadow limits never deny: they are decided after the others admitted, apart from them.
    const limits = resolved.filter((limit) => !limit.shadow);
    // A call's skipped limits are a bit mask (policies/skip.ts).
    if (limits.length > 30 && limits.some((limit) => limit.skip !== undefined)) {
      throw new TypeError(
        `RateLimit: ${where}: a route with skip predicates may have at most 30 limits, got ${limits.length}`,
      );
    }
    if (concurrency.length > 0 && limits.some((limit) => limit.maxDelayMs > 0)) {
      const delayed = limits.find((limit) => limit.maxDelayMs > 0)!;
      throw new TypeError(
        `RateLimit: ${where}, limit "${delayed.name}": maxDelay cannot be combined with a concurrency limit on the same route ("${concurrency[0]!.name}"): a request waiting for its token would hold no slot`,
      );
    }
    const lateEnforced = resolved
      .slice(resolved.length - late.length)
      .filter((limit) => !limit.shadow).length;
    const route: CompiledRoute = {
      ...enforcedLimits(limits, lateEnforced, this.options.failMode),
      routeId,
      transport: this.transports.forType(transportType),
      moduleFailMode: this.options.failMode,
      shadowLimits: resolved.filter((limit) => limit.shadow),
      concurrency,
      concurrencyNames: concurrency.map((limit) => limit.name),
      concurrencyBursts: concurrency.map((limit) => limit.concurrency),
      interceptorBound: bindsInterceptor(controller) || bindsInterceptor(handler),
    };
    let byHandler = this.routes.get(controller);
    if (!byHandler) this.routes.set(controller, (byHandler = new Map()));
    byHandler.set(handler, route);
    return route;
  }

  /** The limits declared for a handler, merged by the precedence rules (see `mergeLimits`). */
  private declared(controller: Type, handler: Handler, where: string): RateLimitOptions[] {
    return mergeLimits(
      {
        ...this.moduleDeclared(),
        classLimits: this.reflector.get<RateLimitOptions[]>(RATE_LIMIT_METADATA, controller) ?? [],
        methodLimits: this.reflector.get<RateLimitOptions[]>(RATE_LIMIT_METADATA, handler) ?? [],
        classSkip: this.reflector.get<SkipDeclaration | undefined>(
          SKIP_RATE_LIMIT_METADATA,
          controller,
        ),
        methodSkip: this.reflector.get<SkipDeclaration | undefined>(
          SKIP_RATE_LIMIT_METADATA,
          handler,
        ),
      },
      where,
    );
  }

  private keyedByUser(limit: RateLimitOptions): boolean {
    return (limit?.key ?? this.options.defaultKey) === 'user';
  }

  private moduleDeclared() {
    return { moduleLimits: this.options.limits, defaults: this.options.defaults };
  }

  private limitContext(where: string, routeId: string): LimitContext {
    return {
      where,
      routeId,
      defaultKey: this.options.defaultKey,
      address: this.options.address,
      ipv6Subnet: this.options.ipv6Subnet,
      warn: this.options.warn,
      deprecated: (option, replacement, limit, declaration) =>
        this.options.deprecations.note(
          option,
          replacement,
          `${where}, limit "${limit}"`,
          declaration,
        ),
      localFallback: this.options.store.localFallback !== undefined,
      shadow: this.options.shadow,
      storeBlocks: typeof this.options.store.block === 'function',
      storeSettles: typeof this.options.store.settle === 'function',
      storeSlots: this.options.store.slots !== undefined,
    };
  }
}

/** The enhancers a field resolver's route needs to run: the guard decides, the interceptor takes slots and reports outcomes. */
function fieldResolverNeeds(route: CompiledRoute): FieldResolverEnhancer[] {
  const needs: FieldResolverEnhancer[] = [];
  if (route.limits.length > 0 || route.shadowLimits.length > 0 || route.concurrency.length > 0)
    needs.push('guards');
  if (route.concurrency.length > 0 || route.reportsOutcome) needs.push('interceptors');
  return needs;
}

/** `RateLimitInterceptor` in the `@UseInterceptors()` metadata, recognised by its static brand (no import cycle). */
function bindsInterceptor(target: object): boolean {
  const interceptors: unknown[] = Reflect.getMetadata(INTERCEPTORS_METADATA, target) ?? [];
  return interceptors.some((interceptor) => {
    const type =
      typeof interceptor === 'function' ? interceptor : (interceptor as object | null)?.constructor;
    return (
      (type as { [RATE_LIMIT_INTERCEPTOR_BRAND]?: boolean } | undefined)?.[
        RATE_LIMIT_INTERCEPTOR_BRAND
      ] === true
    );
  });
}
