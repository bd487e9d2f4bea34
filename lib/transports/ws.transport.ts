import type { ArgumentsHost, ExecutionContext } from '@nestjs/common';
import type { RequestLike } from '../keys/key-strategy.js';
import { HeaderlessTransport } from './headerless.transport.js';
import { requestOfSocket } from './socket-request.js';
import type { RateLimitDenial, RequestResponse } from './rate-limit-transport.interface.js';
import {
  denialErrorObject,
  unavailableErrorObject,
  type RateLimitErrorObject,
  type TransportExceptionClass,
} from './transport-error.js';
import type { TransportHost } from './transport-host.js';
import { recordUpgradeRequests, upgradeRequestOf } from './upgrade-requests.js';
import { acknowledge, sendWsException } from './ws-reply.js';

/** A socket.io `Socket` (`request` is the handshake request) or a `ws` `WebSocket` (`_socket` is its TCP socket). */
interface WsClient {
  readonly request?: RequestLike;
  readonly _socket?: { readonly remoteAddress?: string };
}

/**
 * WebSocket gateways (`@nestjs/platform-socket.io`, `@nestjs/platform-ws`):
 * the caller is the connection's handshake request (its address, with the
 * module's `trustProxy`, and its headers); no headers to write; a denial is a
 * `WsException` carrying `{ status, statusCode: 429, message, retryAfter }`,
 * which Nest's exception filter sends as an `exception` event, and which the
 * acknowledgement callback also gets when the client asked for one (an
 * `emitWithAck` does not wait for events).
 *
 * `ws` keeps no handshake request: the upgrade requests of the HTTP server are
 * recorded on their sockets (see `upgrade-requests.ts`). A gateway on a port
 * of its own is keyed by its socket address; with `trustProxy` set, that is
 * said once in the log.
 *
 * @internal
 */
export class WsTransport extends HeaderlessTransport {
  private unreadableReported = false;

  private constructor(
    private readonly WsException: TransportExceptionClass,
    private readonly host: TransportHost,
  ) {
    super('ws');
  }

  /** Loads `WsException` from `@nestjs/websockets` (there is a gateway, so it is installed). */
  static async create(host: TransportHost): Promise<WsTransport> {
    const { WsException } = await import('@nestjs/websockets');
    const server = host.adapter()?.getHttpServer() as
      Parameters<typeof recordUpgradeRequests>[0] | undefined;
    if (typeof server?.prependListener === 'function') recordUpgradeRequests(server);
    return new WsTransport(WsException, host);
  }

  override requestResponse(context: ExecutionContext): RequestResponse {
    const client = context.switchToWs().getClient<WsClient | undefined>();
    return { request: client?.request ?? this.upgradeRequest(client), response: undefined };
  }

  override denialError(denial: RateLimitDenial, context: ArgumentsHost): Error {
    return this.answer(denialErrorObject(denial), context);
  }

  override unavailableError(context: ArgumentsHost): Error {
    return this.answer(unavailableErrorObject(), context);
  }

  /**
   * A denial from application code (`RateLimiter.enforce()`), should a
   * global filter ever reach a gateway: Nest's WebSocket exception handling
   * ignores what a filter returns, so the `exception` event is sent here.
   * (Nest applies no global filter to gateways today: the module binds
   * `RateLimitWsExceptionFilter` to them instead, see `ws-reply.ts`.)
   */
  override filterReply(denial: RateLimitDenial, host: ArgumentsHost): undefined {
    sendWsException(host, denialErrorObject(denial));
    return undefined;
  }

  override failed(_response: unknown, error: unknown): boolean {
    return error !== undefined && !(error instanceof this.WsException);
  }

  private answer(error: RateLimitErrorObject, context: ArgumentsHost): Error {
    acknowledge(context, error);
    return new this.WsException(error);
  }

  private upgradeRequest(client: WsClient | undefined): RequestLike | undefined {
    const socket = client?._socket;
    if (socket === undefined) return undefined;
    const request = upgradeRequestOf(socket);
    if (request !== undefined) return request as RequestLike;
    if (this.host.trustsProxies && !this.unreadableReported) {
      this.unreadableReported = true;
      this.host.warn(
        'RateLimit: a ws gateway connection came without its upgrade request (a gateway on a port of its own?): ' +
          'X-Forwarded-For cannot be read, so trustProxy does not apply and such connections are keyed by their socket address. Said once.',
      );
    }
    return requestOfSocket(socket);
  }
}
