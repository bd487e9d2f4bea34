import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { RESOLVED_RATE_LIMIT_OPTIONS } from '../rate-limit.constants.js';
import { readPlatformTrustProxy, trustProxyConflict } from '../keys/platform-trust-proxy.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import { GraphqlTransport } from './graphql.transport.js';
import type { HandlerKind } from './handler-kind.js';
import { HeaderlessTransport } from './headerless.transport.js';
import { HttpTransport } from './http.transport.js';
import type { RateLimitTransport } from './rate-limit-transport.interface.js';
import { RpcTransport } from './rpc.transport.js';
import type { TransportHost } from './transport-host.js';
import { WsTransport } from './ws.transport.js';

/**
 * The transports of the kinds that need their optional peer package (its
 * exception class, so that the transport's own exception filter recognises
 * a denial): loaded at start-up, only when a handler of that kind exists.
 */
const LOADED: Partial<Record<HandlerKind, (host: TransportHost) => Promise<RateLimitTransport>>> = {
  ws: (host) => WsTransport.create(host),
  rpc: (host) => RpcTransport.create(host),
};

/**
 * The transports the module knows, one per context type. Routes pick theirs
 * when they are compiled; nothing on the request path looks one up.
 *
 * @internal
 */
@Injectable()
export class RateLimitTransports implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly byType = new Map<string, RateLimitTransport>();
  private readonly host: TransportHost;

  constructor(
    adapterHost: HttpAdapterHost,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {
    this.host = {
      adapter: () => adapterHost.httpAdapter,
      warn: options.warn,
      trustsProxies: options.trustsProxies,
    };
    this.byType.set('http', new HttpTransport(this.host.adapter, options.errorFormat));
    this.byType.set('graphql', new GraphqlTransport(this.host.adapter, options.headers));
  }

  /** Build the transports of these kinds (loading their peer packages) before any route is compiled. */
  async load(kinds: Iterable<HandlerKind>): Promise<void> {
    for (const kind of kinds) {
      const create = LOADED[kind];
      if (create !== undefined && !this.byType.has(kind))
        this.byType.set(kind, await create(this.host));
    }
  }

  /**
   * A module `trustProxy` that says otherwise than the HTTP platform's own
   * setting (Express `app.set('trust proxy')`, Fastify `trustProxy`) is said
   * once. At bootstrap: the application sets the platform's after it is
   * created, before `init()` or `listen()`.
   */
  onApplicationBootstrap(): void {
    const conflict = trustProxyConflict(
      this.options.trustProxy,
      readPlatformTrustProxy(this.host.adapter()),
    );
    if (conflict !== undefined) this.options.warn(conflict);
  }

  /** Transports that keep something for later (refused events not yet said) finish it. */
  onModuleDestroy(): void {
    for (const transport of this.byType.values()) (transport as { close?(): void }).close?.();
  }

  /** The transport of a context type (`context.getType()`). */
  forType(type: string): RateLimitTransport {
    let transport = this.byType.get(type);
    if (transport === undefined) {
      // A context start-up discovery did not see (a custom transport): the
      // same decision, HTTP errors, no headers.
      this.host.warn(
        `RateLimit: handlers of context type "${type}" were not found at start-up; ` +
          'their denials are HTTP 429 exceptions, which that transport may not understand',
      );
      this.byType.set(type, (transport = new HeaderlessTransport(type)));
    }
    return transport;
  }
}
