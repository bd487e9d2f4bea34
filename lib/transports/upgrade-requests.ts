import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** Where the HTTP upgrade request of a connection is kept: on its socket. */
const UPGRADE_REQUEST: unique symbol = Symbol('RATE_LIMIT:UPGRADE_REQUEST');

interface SocketWithRequest {
  [UPGRADE_REQUEST]?: IncomingMessage;
}

/** The part of `http.Server` this needs (Express's and Fastify's servers both are one). */
interface UpgradingServer {
  prependListener(
    event: 'upgrade',
    listener: (request: IncomingMessage, socket: Duplex) => void,
  ): unknown;
  listenerCount(event: 'upgrade'): number;
}

const recording = new WeakSet<object>();

/**
 * Keep each upgrade request of `server` on its socket. A `ws` `WebSocket`
 * keeps its socket (`_socket`) but not the request it was upgraded from, and
 * the request is what `X-Forwarded-For` (so the client behind a proxy) and
 * the headers a key may read come from. Added only when a `ws` gateway
 * exists; a server with no other `upgrade` listener (a gateway on a port of
 * its own) still refuses upgrades, as Node does without listeners.
 */
export function recordUpgradeRequests(server: UpgradingServer): void {
  if (recording.has(server)) return;
  recording.add(server);
  server.prependListener('upgrade', (request, socket) => {
    (socket as SocketWithRequest)[UPGRADE_REQUEST] = request;
    if (server.listenerCount('upgrade') === 1) socket.destroy();
  });
}

/** The upgrade request a socket came from, when {@link recordUpgradeRequests} saw it. */
export function upgradeRequestOf(socket: object | undefined): IncomingMessage | undefined {
  return (socket as SocketWithRequest | undefined)?.[UPGRADE_REQUEST];
}
