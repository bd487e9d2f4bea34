import type { ExecutionContext } from '@nestjs/common';
import type { RequestLike } from '../keys/key-strategy.js';
import { HeaderlessTransport } from './headerless.transport.js';
import type { RateLimitDenial, RequestResponse } from './rate-limit-transport.interface.js';
import { denialErrorObject, unavailableErrorObject, type TransportExceptionClass } from './transport-error.js';
import type { TransportHost } from './transport-host.js';

/** A socket.io `Socket` (`request` is the handshake request) or a `ws` `WebSocket` (`_socket` is its TCP socket). */
interface WsClient {
  readonly request?: RequestLike;
  readonly _socket?: { readonly remoteAddress?: string };
}

/**
 * WebSocket gateways (`@nestjs/platform-socket.io`, `@nestjs/platform-ws`):
 * the caller is the connection's handshake request (its address, with the
 * module's proxy rules, and its headers); no headers to write; a denial is a
 * `WsException` carrying `{ status, statusCode: 429, message, retryAfter }`,
 * also given to the acknowledgement callback when the client asked for one
 * (Nest's exception filter emits an `exception` event, which an `emitWithAck`
 * does not wait for).
 *
 * @internal
 */
export class WsTransport extends HeaderlessTransport {
  private constructor(private readonly WsException: TransportExceptionClass) {
    super('ws');
  }

  /** Loads `WsException` from `@nestjs/websockets` (there is a gateway, so it is installed). */
  static async create(_host: TransportHost): Promise<WsTransport> {
    const { WsException } = await import('@nestjs/websockets');
    return new WsTransport(WsException);
  }

  override requestResponse(context: ExecutionContext): RequestResponse {
    const client = context.switchToWs().getClient<WsClient | undefined>();
    return { request: client?.request ?? (client?._socket ? { socket: client._socket } : undefined), response: undefined };
  }

  override denialError(denial: RateLimitDenial, context: ExecutionContext): Error {
    return this.answer(denialErrorObject(denial), context);
  }

  override unavailableError(context: ExecutionContext): Error {
    return this.answer(unavailableErrorObject(), context);
  }

  override failed(_response: unknown, error: unknown): boolean {
    return error !== undefined && !(error instanceof this.WsException);
  }

  private answer(error: object, context: ExecutionContext): Error {
    // socket.io passes the acknowledgement callback after the data.
    const ack = context.getArgByIndex<unknown>(2);
    if (typeof ack === 'function') ack(error);
    return new this.WsException(error);
  }
}
