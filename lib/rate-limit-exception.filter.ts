import { Catch, Inject, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { RateLimitExceededException } from './errors/rate-limit-exceeded.exception.js';
import { RESOLVED_RATE_LIMIT_OPTIONS } from './rate-limit.constants.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';
import { HttpTransport } from './transports/http.transport.js';
import type { RateLimitDenial } from './transports/rate-limit-transport.interface.js';
import { RateLimitTransports } from './transports/rate-limit-transports.js';

/**
 * Gives a {@link RateLimitExceededException} thrown by application code
 * (`RateLimiter.enforce()`, or `throw new RateLimitExceededException(…)`)
 * the response the guard's own denial has: on HTTP, `Retry-After`, the
 * rate-limit headers of the limits it carries and the problem media type,
 * then Nest's usual reply of the exception (status 429 and its body); on
 * other transports, the transport's own denial (a GraphQL error with
 * `TOO_MANY_REQUESTS`, a `WsException`, an `RpcException`).
 *
 * Registered by the module as an `APP_FILTER`. An application filter that
 * catches everything and is chosen first (Nest tries the filters registered
 * last first) takes over: it can write the same headers from the
 * exception's `retryAfter`, `limits` and `decisions`.
 *
 * @publicApi
 */
@Catch(RateLimitExceededException)
export class RateLimitExceptionFilter extends BaseExceptionFilter {
  constructor(
    private readonly transports: RateLimitTransports,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {
    super();
  }

  override catch(exception: RateLimitExceededException, host: ArgumentsHost): unknown {
    const denial: RateLimitDenial = {
      limits: exception.limits,
      decisions: exception.decisions,
      policy: undefined,
      retryAfter: exception.retryAfter,
    };
    const transport = this.transports.forType(host.getType());
    if (host.getType() !== 'http' || !(transport instanceof HttpTransport))
      return transport.filterReply(denial, host);
    transport.writeDenialHeaders(
      host.switchToHttp().getResponse(),
      this.options.headers,
      denial,
      exception.errorFormat,
    );
    return super.catch(exception, host);
  }
}
