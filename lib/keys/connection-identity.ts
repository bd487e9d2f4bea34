import { randomBytes } from 'node:crypto';
import type { AddressedRequest } from '../interfaces/request-address.interface.js';

const CONNECTION_ID = Symbol('nestjs-holdup:connection-id');

/**
 * A per-process prefix: connection numbers restart in every process, and
 * buckets in a shared store (Redis) must not meet another instance's
 * connection of the same number.
 */
const PROCESS = randomBytes(6).toString('hex');
let nextConnection = 0;

type Stamped = { [CONNECTION_ID]?: string };

/**
 * The identity of the connection a request arrived on (`'connection'` key):
 * its socket (HTTP keep-alive, a WebSocket, a TCP microservice peer) gets a
 * number the first time it is seen, kept on the socket itself, so that it
 * lives exactly as long as the connection. `undefined` when the request has
 * no socket.
 */
export function connectionIdentity(request: AddressedRequest | undefined): string | undefined {
  const socket = (request?.socket ?? request?.raw?.socket) as Stamped | undefined;
  if (socket === undefined || socket === null) return undefined;
  return (socket[CONNECTION_ID] ??= `c=${PROCESS}.${(nextConnection++).toString(36)}`);
}
