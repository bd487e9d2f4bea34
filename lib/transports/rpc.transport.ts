import type { ExecutionContext } from '@nestjs/common';
import type { RequestLike } from '../keys/key-strategy.js';
import { HeaderlessTransport } from './headerless.transport.js';
import type { RateLimitDenial, RequestResponse } from './rate-limit-transport.interface.js';
import { denialErrorObject, unavailableErrorObject, type TransportExceptionClass } from './transport-error.js';
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
  private constructor(private readonly RpcException: TransportExceptionClass) {
    super('rpc');
  }

  /** Loads `RpcException` from `@nestjs/microservices` (there is a message handler, so it is installed). */
  static async create(_host: TransportHost): Promise<RpcTransport> {
    const { RpcException } = await import('@nestjs/microservices');
    return new RpcTransport(RpcException);
  }

  override requestResponse(context: ExecutionContext): RequestResponse {
    const rpc = context.switchToRpc().getContext<RpcContextLike | undefined>();
    const socket = typeof rpc?.getSocketRef === 'function' ? rpc.getSocketRef()?.socket : undefined;
    const request: RequestLike | undefined = socket ? { socket } : undefined;
    return { request, response: undefined };
  }

  override denialError(denial: RateLimitDenial, _context: ExecutionContext): Error {
    return new this.RpcException(denialErrorObject(denial));
  }

  override unavailableError(_context: ExecutionContext): Error {
    return new this.RpcException(unavailableErrorObject());
  }

  override failed(_response: unknown, error: unknown): boolean {
    return error !== undefined && !(error instanceof this.RpcException);
  }
}
