import {
  IntrinsicException,
  type ArgumentsHost,
  type ExecutionContext,
  type HttpServer,
} from '@nestjs/common';
import type { HeadersMode } from '../interfaces/rate-limit-module-options.interface.js';
import type { RequestLike } from '../keys/key-strategy.js';
import { HttpTransport } from './http.transport.js';
import type { RateLimitDenial, RequestResponse } from './rate-limit-transport.interface.js';
import { denialErrorObject, unavailableErrorObject } from './transport-error.js';

/**
 * The GraphQL context as Nest's drivers build it by default: Apollo `{ req }`
 * (the Express request, whose `res` is the response), Mercurius `{ req,
 * reply }` (Fastify's request and reply); a custom context may add `res` or
 * `request`.
 */
interface GraphqlContext {
  readonly req?: RequestLike & { readonly res?: unknown };
  readonly request?: RequestLike;
  readonly res?: unknown;
  readonly reply?: unknown;
}

/**
 * A GraphQL error in the shape every driver passes through: graphql-js copies
 * `extensions` from the error a resolver throws, and Nest's Apollo driver
 * turns only `HttpException`s into `INTERNAL_SERVER_ERROR`, which this is not.
 *
 * An `IntrinsicException`: an answer to the client, not a failure of the
 * application, so Nest's exception handler for resolvers
 * (`ExternalExceptionFilter`) does not log it. It logged every other error at
 * ERROR with its stack: one line per refused field, 999 for one query of
 * 1,000 aliases. (A store failure behind `SERVICE_UNAVAILABLE` is logged
 * once per burst by the engine.)
 *
 * @publicApi
 */
export class RateLimitGraphqlError extends IntrinsicException {
  override readonly name = 'RateLimitGraphqlError';

  constructor(
    message: string,
    readonly extensions: {
      readonly code: 'TOO_MANY_REQUESTS' | 'SERVICE_UNAVAILABLE';
      readonly retryAfter?: number | null;
      /** Each limit of the denied call and the whole tokens it has left (a complexity budget's remainder). */
      readonly limits?: readonly { readonly name: string; readonly remaining: number }[];
    },
  ) {
    super(message);
  }
}

/**
 * GraphQL over HTTP: the request and response are the HTTP ones behind the
 * operation, found in the driver's default context (the response through the
 * request where the platform links them: Express's `req.res`); headers are
 * written on that response. A denial is a GraphQL error with
 * `extensions.code: 'TOO_MANY_REQUESTS'` and `extensions.retryAfter`
 * (seconds, `null` when waiting cannot help); the operation's other fields
 * keep their data. Guards run per resolver call, so each call of a limited
 * field is charged (aliases cannot multiply work for free).
 *
 * @internal
 */
export class GraphqlTransport extends HttpTransport {
  override readonly type: string = 'graphql';

  constructor(
    adapter: () => HttpServer | undefined,
    /** The module's `headers`, for the headers of a denial from application code. */
    private readonly headersMode: HeadersMode,
  ) {
    super(adapter);
  }

  override requestResponse(context: ExecutionContext): RequestResponse {
    const graphql = context.getArgByIndex<GraphqlContext | undefined>(2);
    const request = graphql?.req ?? graphql?.request;
    return { request, response: graphql?.res ?? graphql?.reply ?? graphql?.req?.res };
  }

  override denialError(denial: RateLimitDenial, _context?: ArgumentsHost): Error {
    const { message, retryAfter } = denialErrorObject(denial);
    const limits = denial.limits.map(({ name }, i) => ({
      name,
      remaining: denial.decisions[i]?.remaining ?? 0,
    }));
    return new RateLimitGraphqlError(message, { code: 'TOO_MANY_REQUESTS', retryAfter, limits });
  }

  override unavailableError(_context?: ArgumentsHost): Error {
    return new RateLimitGraphqlError(unavailableErrorObject().message, {
      code: 'SERVICE_UNAVAILABLE',
    });
  }

  /**
   * A denial from application code (`RateLimiter.enforce()` in a resolver):
   * the headers on the HTTP response, and the GraphQL error, which Nest's
   * GraphQL exception handling returns as the resolver's result.
   */
  override filterReply(denial: RateLimitDenial, host: ArgumentsHost): unknown {
    const { response } = this.requestResponse(host as ExecutionContext);
    this.writeDenialHeaders(response, this.headersMode, denial, 'nest');
    return this.denialError(denial, host);
  }

  /** A thrown rate-limit denial of a nested call is not a failure of this one; otherwise as HTTP. */
  override failed(response: unknown, error: unknown): boolean {
    if (error instanceof RateLimitGraphqlError)
      return error.extensions.code !== 'TOO_MANY_REQUESTS';
    return super.failed(response, error);
  }
}
