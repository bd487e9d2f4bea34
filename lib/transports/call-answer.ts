import { retryAfterSeconds } from '../headers/rate-limit-headers.js';
import type { HeaderSource } from '../headers/write-headers.js';
import type { HeadersMode } from '../interfaces/rate-limit-module-options.interface.js';
import type { RateLimitDenial, RateLimitTransport } from './rate-limit-transport.interface.js';

/**
 * The one place a call's answer reaches the client, for the guard, the
 * concurrency slots and the interceptor alike: the headers of an admitted
 * call, and those of a denied one with its `Retry-After` and the denial its
 * error is made from (thrown by the caller: the guard's
 * `throwRateLimitException`, or the transport's `denialError`).
 */
export function answerAdmitted(
  transport: RateLimitTransport,
  response: unknown,
  mode: HeadersMode,
  source: HeaderSource,
): void {
  transport.writeHeaders(response, mode, source);
}

/** Headers of a denied call (`Retry-After` included); the denial to throw. */
export function answerDenied(
  transport: RateLimitTransport,
  response: unknown,
  mode: HeadersMode,
  source: HeaderSource,
): RateLimitDenial {
  const retryAfter = retryAfterSeconds(source.decisions);
  transport.writeHeaders(response, mode, source, retryAfter);
  return { ...source, retryAfter };
}
