import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA } from '@nestjs/common/constants.js';
import { RateLimitExceededException } from '../errors/rate-limit-exceeded.exception.js';
import { denialErrorObject, type RateLimitErrorObject } from './transport-error.js';

/** `websockets:is_gateway`, spelled out: the module never imports `@nestjs/websockets` statically. */
const GATEWAY_METADATA = 'websockets:is_gateway';

/** The client of a WebSocket call: a socket.io `Socket` (`emit`) or a `ws` `WebSocket` (`send`, numeric `readyState`). */
interface WsClient {
  readonly readyState?: unknown;
  send?(data: string): void;
  emit?(event: string, payload: unknown): void;
}

/** socket.io passes the acknowledgement callback after the data (`[client, data, ack, pattern]`). */
export function acknowledge(host: ArgumentsHost, error: RateLimitErrorObject): void {
  const ack = host.getArgByIndex<unknown>(2);
  if (typeof ack === 'function') ack(error);
}

/**
 * Send `error` as Nest's `BaseWsExceptionFilter` sends a `WsException`: an
 * `exception` event (socket.io) or a `{ event: 'exception', data }` frame
 * (`ws`), and to the acknowledgement when the client asked for one.
 */
export function sendWsException(host: ArgumentsHost, error: RateLimitErrorObject): void {
  acknowledge(host, error);
  const client = host.switchToWs().getClient<WsClient | undefined>();
  if (typeof client?.readyState === 'number' && typeof client.send === 'function') {
    client.send(JSON.stringify({ event: 'exception', data: error }));
  } else if (typeof client?.emit === 'function') {
    client.emit('exception', error);
  }
}

/**
 * Answers a `RateLimitExceededException` thrown in a gateway handler
 * (`RateLimiter.enforce()`) with the guard's own WebSocket denial. Nest
 * applies no global filter to gateways (not `APP_FILTER`, not
 * `useGlobalFilters`), so the module binds this one to every gateway class
 * at start-up; without it such a denial reaches the client as "Internal
 * server error".
 *
 * @internal
 */
@Catch(RateLimitExceededException)
export class RateLimitWsExceptionFilter implements ExceptionFilter {
  catch(exception: RateLimitExceededException, host: ArgumentsHost): void {
    sendWsException(host, denialErrorObject({ retryAfter: exception.retryAfter }));
  }
}

const filter = new RateLimitWsExceptionFilter();

/** Bind {@link RateLimitWsExceptionFilter} to `target` if it is a gateway (once). */
export function bindWsExceptionFilter(target: object): void {
  if (Reflect.getMetadata(GATEWAY_METADATA, target) !== true) return;
  const filters: unknown[] = Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, target) ?? [];
  if (filters.includes(filter)) return;
  Reflect.defineMetadata(EXCEPTION_FILTERS_METADATA, [...filters, filter], target);
}
