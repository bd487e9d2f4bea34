import { IntrinsicException, type ArgumentsHost, type ExecutionContext } from '@nestjs/common';
import { EMPTY, throwError } from 'rxjs';
import { EventDropLog } from './event-drop-log.js';
import { describeHandler } from './handler-kind.js';
import { HeaderlessTransport } from './headerless.transport.js';
import { requestOfSocket } from './socket-request.js';
import type { RateLimitDenial, RequestResponse } from './rate-limit-transport.interface.js';
import {
  denialErrorObject,
  unavailableErrorObject,
  type TransportExceptionClass,
} from './transport-error.js';
import type { TransportHost } from './transport-host.js';

/** A `TcpContext`: its JSON socket wraps the TCP socket the peer is on. Other transports' contexts have no peer. */
interface RpcContextLike {
  getSocketRef?(): { readonly socket?: { readonly remoteAddress?: string } } | undefined;
}

/**
 * Microservices (`@MessagePattern`, `@EventPattern`): the caller's address is
 * the TCP peer where the transport has one (TCP); no headers; a denial is an
 * `RpcException` carrying `{ status, statusCode: 429, message, retryAfter }`.
 *
 * @internal
 */
export class RpcTransport extends HeaderlessTransport {
  /** Refused events, said once per burst. */
  readonly eventDrops: EventDropLog;

  private constructor(
    private readonly RpcException: TransportExceptionClass,
    host: TransportHost,
  ) {
    super('rpc');
    this.eventDrops = new EventDropLog(host.warn);
  }

  /** Loads `RpcException` from `@nestjs/microservices` (there is a message handler, so it is installed). */
  static async create(host: TransportHost): Promise<RpcTransport> {
    const { RpcException } = await import('@nestjs/microservices');
    return new RpcTransport(RpcException, host);
  }

  override requestResponse(context: ExecutionContext): RequestResponse {
    const rpc = context.switchToRpc().getContext<RpcContextLike | undefined>();
    const socket = typeof rpc?.getSocketRef === 'function' ? rpc.getSocketRef()?.socket : undefined;
    return { request: socket ? requestOfSocket(socket) : undefined, response: undefined };
  }

  /**
   * A refused message: an `RpcException` the client's `send()` rejects with.
   * A refused event: nobody waits for it, and Nest would log every one; it is
   * counted and said once per burst instead, and the error thrown is one Nest
   * does not log (an `IntrinsicException`).
   */
  override denialError(denial: RateLimitDenial, context: ArgumentsHost): Error {
    const error = denialErrorObject(denial);
    if (!isEventHandler(context)) return new this.RpcException(error);
    this.eventDrops.dropped(
      handlerName(context as ExecutionContext),
      denialNames(denial),
      denial.retryAfter,
    );
    return new RateLimitedEvent(error.message);
  }

  /**
   * A denial from application code (`RateLimiter.enforce()`), as Nest's RPC
   * exception handling expects it from a filter: the error stream a message's
   * client rejects with; for an event, counted and said once per burst like
   * the guard's (an empty stream: nothing to answer, nothing for Nest to log).
   */
  override filterReply(denial: RateLimitDenial, host: ArgumentsHost): unknown {
    const error = denialErrorObject(denial);
    if (!isEventHandler(host)) return throwError(() => error);
    this.eventDrops.dropped(
      handlerName(host as ExecutionContext),
      denialNames(denial),
      denial.retryAfter,
    );
    return EMPTY;
  }

  override unavailableError(_context: ArgumentsHost): Error {
    return new this.RpcException(unavailableErrorObject());
  }

  /** The module is shutting down: say what the open bursts of refused events counted. */
  close(): void {
    this.eventDrops.flush();
  }

  override failed(_response: unknown, error: unknown): boolean {
    return error !== undefined && !(error instanceof this.RpcException);
  }
}

/** The error a refused event is: Nest does not log an `IntrinsicException`, the module's burst log has said it. */
class RateLimitedEvent extends IntrinsicException {}

function isEventHandler(context: ArgumentsHost): boolean {
  // An exception filter's host may know neither (Nest's RPC proxy builds it from the arguments alone).
  const target = (context as Partial<ExecutionContext>).getClass?.();
  const handler = (context as Partial<ExecutionContext>).getHandler?.();
  if (typeof target !== 'function' || typeof handler !== 'function') return false;
  return describeHandler(target, handler)?.event === true;
}

function handlerName(context: ExecutionContext): string {
  return `${context.getClass().name}.${context.getHandler().name}`;
}

/** The names of the limits that refused (those whose decision denied). */
function denialNames(denial: RateLimitDenial): string[] {
  const names: string[] = [];
  for (let i = 0; i < denial.decisions.length; i++)
    if (!denial.decisions[i]!.allowed && denial.limits[i]) names.push(denial.limits[i]!.name);
  return names;
}
