import type { ExecutionContext } from '@nestjs/common';
import type { RequestLike } from '../keys/key-strategy.js';
import { HttpTransport } from './http.transport.js';
import type { RequestResponse } from './rate-limit-transport.interface.js';

/** The GraphQL context as Nest's drivers build it (Apollo/Express `{ req, res }`, Mercurius/Fastify `{ request, reply }`). */
interface GraphqlContext {
  readonly req?: RequestLike;
  readonly request?: RequestLike;
  readonly res?: unknown;
  readonly reply?: unknown;
}

/**
 * GraphQL over HTTP: the request and response are the HTTP ones the driver
 * put in the GraphQL context (argument 2 of a resolver); the rest is HTTP.
 *
 * @internal
 */
export class GraphqlTransport extends HttpTransport {
  override readonly type: string = 'graphql';

  override requestResponse(context: ExecutionContext): RequestResponse {
    const graphql = context.getArgByIndex<GraphqlContext | undefined>(2);
    return { request: graphql?.req ?? graphql?.request, response: graphql?.res ?? graphql?.reply };
  }
}
