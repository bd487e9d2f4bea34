import type { ArgumentsHost, ExecutionContext } from '@nestjs/common';
import type { HeaderSource } from '../headers/write-headers.js';
import type { HeadersMode } from '../interfaces/rate-limit-module-options.interface.js';
import type { RequestLike } from '../keys/key-strategy.js';

/** The request a limit's key is read from and the response its headers go to. */
export interface RequestResponse {
  readonly request: RequestLike | undefined;
  /** `undefined` where there is nothing to write headers to (RPC, WebSocket). */
  readonly response: unknown;
}

/** What a denial becomes: everything the client is told. */
export interface RateLimitDenial extends HeaderSource {
  /** Seconds until the request could succeed; `undefined` when it never can. */
  readonly retryAfter: number | undefined;
}

/**
 * How the rate limiter meets one kind of Nest execution context (HTTP,
 * GraphQL, WebSocket, RPC): where the caller's request and the response are,
 * where headers go, what a denial and an unavailable limiter become, and
 * whether a handler's outcome counts as a failure.
 *
 * One object per kind, chosen when a route is compiled: the guard and the
 * interceptor ask the route's transport and never branch on
 * `context.getType()` themselves.
 *
 * @publicApi
 */
export interface RateLimitTransport {
  /** The context type this transport serves (`'http'`, `'graphql'`, `'ws'`, `'rpc'`...). */
  readonly type: string;
  /** The caller's request (for keys) and the response (for headers). */
  requestResponse(context: ExecutionContext): RequestResponse;
  /**
   * Write the rate-limit headers (and `Retry-After`, when given) on
   * `response`. Transports without headers do nothing.
   */
  writeHeaders(
    response: unknown,
    mode: HeadersMode,
    source: HeaderSource,
    retryAfter?: number,
  ): void;
  /**
   * The error thrown for a denied request, in the transport's own terms (an
   * HTTP 429, a GraphQL error, a `WsException`, an `RpcException`). May also
   * tell the client through a channel the error does not reach (a
   * WebSocket acknowledgement).
   */
  denialError(denial: RateLimitDenial, context: ArgumentsHost): Error;
  /** The error thrown when the store failed and the fail mode is `'closed'`. */
  unavailableError(context: ArgumentsHost): Error;
  /**
   * What the module's exception filter returns for a `RateLimitExceededException`
   * that application code threw (`RateLimiter.enforce()`) in a context of
   * this transport, other than HTTP (which the filter answers itself): the
   * transport's own denial, as its exception handling expects it from a filter.
   */
  filterReply(denial: RateLimitDenial, host: ArgumentsHost): unknown;
  /**
   * Whether a handler's outcome is a failure, for adaptive limits: `error` is
   * what the handler threw (`undefined` when it completed), `response` the
   * one {@link requestResponse} found.
   */
  failed(response: unknown, error: unknown): boolean;
  /**
   * Call `listener` if the client goes away before its response is sent (a
   * request waiting for its token under `maxDelay` then gives it back).
   * Answers the function that stops listening. Optional: transports without
   * a connection to watch never call it.
   */
  onClientGone?(exchange: RequestResponse, listener: () => void): () => void;
}
