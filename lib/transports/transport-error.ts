import { HttpStatus } from '@nestjs/common';
import type { RateLimitDenial } from './rate-limit-transport.interface.js';

/**
 * The error object WebSocket and RPC clients receive (inside a `WsException`
 * or `RpcException`): `{ status: 'error', statusCode, message, retryAfter }`,
 * `retryAfter` in seconds, `null` when waiting cannot help.
 */
export interface RateLimitErrorObject {
  readonly status: 'error';
  readonly statusCode: number;
  readonly message: string;
  readonly retryAfter?: number | null;
}

/** The error object of a denial. */
export function denialErrorObject(
  denial: Pick<RateLimitDenial, 'retryAfter'>,
): RateLimitErrorObject {
  return {
    status: 'error',
    statusCode: HttpStatus.TOO_MANY_REQUESTS,
    message:
      denial.retryAfter === undefined
        ? 'Request cost exceeds the rate limit burst'
        : 'Too Many Requests',
    retryAfter: denial.retryAfter ?? null,
  };
}

/** The error object when the store failed and the fail mode is `'closed'`. */
export function unavailableErrorObject(): RateLimitErrorObject {
  return {
    status: 'error',
    statusCode: HttpStatus.SERVICE_UNAVAILABLE,
    message: 'Rate limiting is temporarily unavailable',
  };
}

/** The constructor of a transport's exception (`WsException`, `RpcException`), loaded from its optional peer. */
export type TransportExceptionClass = new (error: string | object) => Error;
