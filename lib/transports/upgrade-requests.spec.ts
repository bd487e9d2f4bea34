import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordUpgradeRequests, upgradeRequestOf } from './upgrade-requests.js';

/** An upgrade request to `server`; resolves with how it ended. */
function upgrade(server: Server): Promise<'closed' | 'upgraded'> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve) => {
    const req = httpRequest({
      port,
      host: '127.0.0.1',
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'x-forwarded-for': '192.0.2.1' },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve('upgraded');
    });
    req.on('error', () => resolve('closed'));
    req.on('close', () => resolve('closed'));
    req.end();
  });
}

describe('recordUpgradeRequests', () => {
  let server: Server;
  beforeEach(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("keeps the upgrade request on its socket, for the listener that takes the upgrade (as ws's server does)", async () => {
    let seen: unknown;
    server.on('upgrade', (_request, socket) => {
      seen = upgradeRequestOf(socket)?.headers['x-forwarded-for'];
      socket.end(
        'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      );
    });
    recordUpgradeRequests(server);
    recordUpgradeRequests(server); // once per server
    expect(server.listenerCount('upgrade')).toBe(2);
    expect(await upgrade(server)).toBe('upgraded');
    expect(seen).toBe('192.0.2.1');
  });

  it('a server nobody else upgrades still refuses upgrades (Node destroys them without listeners): no hanging socket', async () => {
    recordUpgradeRequests(server);
    expect(await upgrade(server)).toBe('closed');
  });

  it('a socket it never saw has no request', () => {
    expect(upgradeRequestOf({})).toBeUndefined();
    expect(upgradeRequestOf(undefined)).toBeUndefined();
  });
});
