import type { ExecutionContext } from '@nestjs/common';
import { HttpTransport } from './http.transport.js';
import type { RequestResponse } from './rate-limit-transport.interface.js';

const NOTHING: RequestResponse = Object.freeze({ request: undefined, response: undefined });

/**
 * Contexts with no HTTP request or response (WebSocket, RPC, anything else):
 * the same decision, without headers, keyed by a key function (or one shared
 * * `unknown` bucket). Errors are the HTTP ones for now.
 *
 * @internal
 */
export class HeaderlessTransport extends HttpTransport {
  constructor(override readonly type: string) {
    super(() => undefined);
  }

  override requestResponse(_context: ExecutionContext): RequestResponse {
    return NOTHING;
  }
}
