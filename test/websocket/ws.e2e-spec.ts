/**
 * A native WebSocket gateway (`@nestjs/platform-ws`) on a Fastify app, with
 * real `ws` clients: per-client buckets by the address of the upgrade
 * request (`X-Forwarded-For` with `trustProxy`: the module records upgrade
 * requests, which `ws` does not keep), the 'connection' key, and the
 * `{ event: 'exception', data }` frame a refused message gets.
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import { WebSocket } from 'ws';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { BadGateway, ChatGateway } from './chat.gateway.js';

describe('ws gateway', () => {
  let app: INestApplication;
  let url: string;
  const sockets: WebSocket[] = [];

  const boot = async (options: RateLimitModuleOptions = {}) => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000), ...options })],
      providers: [ChatGateway],
    }).compile();
    app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    url = `ws://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  };
  const connect = async (
    options: { localAddress?: string; headers?: Record<string, string> } = {},
  ): Promise<WebSocket> => {
    const socket = new WebSocket(url, options);
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return socket;
  };
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await app?.close();
  });

  /** Send one message and wait for the one frame the gateway answers it with. */
  const send = (socket: WebSocket, event: string, data: unknown) =>
    new Promise<unknown>((resolve) => {
      socket.once('message', (frame) => resolve(JSON.parse(String(frame))));
      socket.send(JSON.stringify({ event, data }));
    });
  const TOO_MANY = (retryAfter: number) => ({
    event: 'exception',
    data: { status: 'error', statusCode: 429, message: 'Too Many Requests', retryAfter },
  });

  it("two clients from two addresses: one bucket each (the default 'ip' key)", async () => {
    await boot();
    const a = await connect({ localAddress: '127.0.0.2' });
    const b = await connect({ localAddress: '127.0.0.3' });
    expect(await send(a, 'say', 'a1')).toEqual({ event: 'said', data: 'a1' });
    expect(await send(a, 'say', 'a2')).toEqual({ event: 'said', data: 'a2' });
    expect(await send(a, 'say', 'a3')).toEqual(TOO_MANY(30));
    expect(await send(b, 'say', 'b1')).toEqual({ event: 'said', data: 'b1' });
  });

  it('behind a proxy: trustProxy reads X-Forwarded-For of the upgrade request', async () => {
    await boot({ trustProxy: ['127.0.0.1'] });
    const a = await connect({ headers: { 'x-forwarded-for': '198.51.100.1' } });
    const b = await connect({ headers: { 'x-forwarded-for': '198.51.100.2' } });
    await send(a, 'say', '1');
    await send(a, 'say', '2');
    expect(await send(a, 'say', '3')).toEqual(TOO_MANY(30));
    expect(await send(b, 'say', '1')).toEqual({ event: 'said', data: '1' });
  });

  it("the 'connection' key: one bucket per connection", async () => {
    await boot();
    const first = await connect({ localAddress: '127.0.0.4' });
    const second = await connect({ localAddress: '127.0.0.4' });
    expect(await send(first, 'typing', null)).toEqual({ event: 'typed', data: true });
    expect(await send(first, 'typing', null)).toEqual(TOO_MANY(60));
    expect(await send(second, 'typing', null)).toEqual({ event: 'typed', data: true });
  });

  it('a denial from RateLimiter.enforce() in a gateway: the same frame', async () => {
    await boot();
    const a = await connect({ localAddress: '127.0.0.6' });
    expect(await send(a, 'export', null)).toEqual({ event: 'exported', data: true });
    expect(await send(a, 'export', null)).toEqual(TOO_MANY(3600));
  });

  it('a bad limit on a gateway fails the bootstrap, with the message an HTTP route gets', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot()],
      providers: [BadGateway],
    }).compile();
    const bad = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
    bad.useWebSocketAdapter(new WsAdapter(bad));
    await expect(bad.init()).rejects.toThrow(
      'RateLimit: BadGateway.bad, limit "default": rate must be',
    );
    await bad.close().catch(() => undefined);
  });
});
