import {
  HttpException,
  ServiceUnavailableException,
  type ArgumentsHost,
  type ExecutionContext,
  type HttpServer,
} from '@nestjs/common';
import { PROBLEM_JSON } from '../errors/denial-body.js';
import type { HeaderSource } from '../headers/write-headers.js';
import { HeaderName } from '../headers/header-names.js';
import { writeRateLimitHeaders } from '../headers/write-headers.js';
import type {
  ErrorFormat,
  HeadersMode,
} from '../interfaces/rate-limit-module-options.interface.js';
import { RateLimitExceededException } from '../errors/rate-limit-exceeded.exception.js';
import type {
  RateLimitDenial,
  RateLimitTransport,
  RequestResponse,
} from './rate-limit-transport.interface.js';

/**
 * HTTP (Express, Fastify, any Nest HTTP adapter): headers go through the
 * adapter's `setHeader`, so every platform behaves the same; a denial is a
 * 429 ({@link RateLimitExceededException}), an unavailable limiter a 503.
 *
 * Subclassed by the transports whose requests and responses are HTTP ones
 * found elsewhere in the context (GraphQL).
 *
 * @internal
 */
export class HttpTransport implements RateLimitTransport {
  readonly type: string = 'http';

  /** `adapter()` rather than the adapter: the HTTP adapter may be set after the module is built. */
  constructor(
    private readonly adapter: () => HttpServer | undefined,
    private readonly errorFormat: ErrorFormat = 'nest',
  ) {}

  /**
   * The HTTP context's first two arguments: what `switchToHttp().getRequest()`
   * and `.getResponse()` answer, without what Nest's `switchToHttp()` makes on
   * every call (three closures, `Object.assign`ed onto the context): 4.4 % of
   * the guard's admitted path (`bench/guard`, profile of `holdup`).
   */
  requestResponse(context: ExecutionContext): RequestResponse {
    return { request: context.getArgByIndex(0), response: context.getArgByIndex(1) };
  }

  /**
   * The response closing before it was sent: Express's response, or
   * Fastify's `reply.raw`, a Node `ServerResponse`. A response closed already
   * (the client left while the store call was in flight: its `close` event
   * is past) calls `listener` at once.
   */
  onClientGone(exchange: RequestResponse, listener: () => void): () => void {
    const response = exchange.response as (NodeResponse & { raw?: NodeResponse }) | undefined;
    const raw = response?.raw ?? response;
    if (raw === undefined || typeof raw.once !== 'function') return noop;
    if (raw.closed === true) {
      if (!raw.writableEnded) listener();
      return noop;
    }
    const onClose = () => {
      if (!raw.writableEnded) listener();
    };
    raw.once('close', onClose);
    return () => raw.off('close', onClose);
  }

  writeHeaders(
    response: unknown,
    mode: HeadersMode,
    source: HeaderSource,
    retryAfter?: number,
  ): void {
    const adapter = this.adapter();
    if (response === undefined || !adapter) return;
    writeRateLimitHeaders(adapter, response, mode, source);
    if (retryAfter !== undefined)
      adapter.setHeader(response, HeaderName.retryAfter, String(retryAfter));
  }

  /**
   * The 429. Made without a stack trace: a denial is an answer, not a fault
   * to trace, and capturing the stack (the guard's frames, inlined ones
   * included) was over a third of what a denied request cost the server
   * (`bench/guard`, holdup-denied, `node --cpu-prof`). Its `stack` is then
   * its name and message alone.
   */
  denialError(denial: RateLimitDenial, _context?: ArgumentsHost): Error {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new RateLimitExceededException(
        denial.retryAfter,
        denial.decisions,
        denial.retryAfter === undefined
          ? 'Request cost exceeds the rate limit burst'
          : 'Too Many Requests',
        { limits: denial.limits, errorFormat: this.errorFormat },
      );
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  /**
   * The headers of a 429 that an exception filter is about to answer: the
   * rate-limit headers (when the denial knows its limits), `Retry-After`, and
   * the problem media type, which the platforms keep when they serialise the body.
   */
  writeDenialHeaders(
    response: unknown,
    mode: HeadersMode,
    denial: RateLimitDenial,
    errorFormat: ErrorFormat,
  ): void {
    const adapter = this.adapter();
    if (response === undefined || !adapter) return;
    if (denial.limits.length > 0) writeRateLimitHeaders(adapter, response, mode, denial);
    if (denial.retryAfter !== undefined)
      adapter.setHeader(response, HeaderName.retryAfter, String(denial.retryAfter));
    if (errorFormat === 'problem+json')
      adapter.setHeader(response, HeaderName.contentType, PROBLEM_JSON);
  }

  filterReply(denial: RateLimitDenial, host: ArgumentsHost): unknown {
    return this.denialError(denial, host);
  }

  unavailableError(_context?: ArgumentsHost): Error {
    return new ServiceUnavailableException('Rate limiting is temporarily unavailable');
  }

  /** A 5xx status, or a thrown error that is not a 4xx `HttpException`. */
  failed(response: unknown, error: unknown): boolean {
    if (error !== undefined) return !(error instanceof HttpException) || error.getStatus() >= 500;
    return statusOf(response) >= 500;
  }
}

/** The status set so far (Express `res.statusCode`, Fastify `reply.statusCode`); 200 when unknown. */
function statusOf(response: unknown): number {
  const status = (response as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof status === 'number' ? status : 200;
}

/** The part of a Node `ServerResponse` {@link HttpTransport.onClientGone} watches. */
interface NodeResponse {
  readonly writableEnded: boolean;
  /** Set once the response emitted `close` (Node 18+). */
  readonly closed?: boolean;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

function noop(): void {}
