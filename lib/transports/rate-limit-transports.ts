import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { GraphqlTransport } from './graphql.transport.js';
import { HeaderlessTransport } from './headerless.transport.js';
import { HttpTransport } from './http.transport.js';
import type { RateLimitTransport } from './rate-limit-transport.interface.js';

/**
 * The transports the module knows, one per context type. Routes pick theirs
 * when they are compiled; nothing on the request path looks one up.
 *
 * @internal
 */
@Injectable()
export class RateLimitTransports {
  private readonly byType = new Map<string, RateLimitTransport>();

  constructor(adapterHost: HttpAdapterHost) {
    const adapter = () => adapterHost.httpAdapter;
    this.byType.set('http', new HttpTransport(adapter));
    this.byType.set('graphql', new GraphqlTransport(adapter));
  }

  /** The transport of a context type (`context.getType()`). */
  forType(type: string): RateLimitTransport {
    let transport = this.byType.get(type);
    if (transport === undefined) this.byType.set(type, (transport = new HeaderlessTransport(type)));
    return transport;
  }
}
