import type { ExecutionContext } from '@nestjs/common';
import type { RequestLike } from './keys/key-strategy.js';

/** The request a limit's key is read from and the response its headers go to. */
export interface RequestResponse {
  readonly request: RequestLike | undefined;
  /** `undefined` where there is nothing to write headers to (RPC, WebSocket). */
  readonly response: unknown;
}

/**
 * HTTP (Express, Fastify) by default; GraphQL's `{ req, res }` (or Fastify's
 * `{ request, reply }`) context is recognised; other transports get the same
 * decision without headers, keyed by a key function or one shared `ip=unknown` bucket.
 */
export function requestResponseOf(context: ExecutionContext): RequestResponse {
  const type = context.getType<string>();
  if (type === 'http') {
    const http = context.switchToHttp();
    return { request: http.getRequest(), response: http.getResponse() };
  }
  if (type === 'graphql') {
    const graphql = context.getArgByIndex<GraphqlContext | undefined>(2);
    return { request: graphql?.req ?? graphql?.request, response: graphql?.res ?? graphql?.reply };
  }
  return { request: undefined, response: undefined };
}

interface GraphqlContext {
  readonly req?: RequestLike;
  readonly request?: RequestLike;
  readonly res?: unknown;
  readonly reply?: unknown;
}
