/**
 * A socket.io gateway (`@nestjs/platform-socket.io`) on an Express app, with
 * real socket.io clients over real sockets: per-client buckets by the
 * handshake's address, the 'connection' key, the error a refused message
 * gets (an `exception` event, and the acknowledgement when one was asked for).
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { io, type Socket } from 'socket.io-client';
import {
  ManualClock,
  MemoryStore,
  RateLimitModule,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import { ChatGateway } from './chat.gateway.js';

describe('socket.io gateway', () => {
  let app: INestApplication;
  let url: string;
  const sockets: Socket[] = [];

  const boot = async (options: RateLimitModuleOptions = {}) => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000), ...options })],
      providers: [ChatGateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useWebSocketAdapter(new IoAdapter(app));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  };
  const connect = async (
    options: { localAddress?: string; headers?: Record<string, string> } = {},
  ): Promise<Socket> => {
    const socket = io(url, {
      transports: ['websocket'],
      forceNew: true,
      localAddress: options.localAddress,
      extraHeaders: options.headers,
    } as never);
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    return socket;
  };
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.disconnect();
    await app?.close();
  });

  /** Everything the server sends back for one emit (events by name, and the acknowledgement when asked for). */
  const send = async (socket: Socket, event: string, data: unknown, withAck = false) => {
    const received: [string, unknown][] = [];
    const onAny = (name: string, payload: unknown) => received.push([name, payload]);
    socket.onAny(onAny);
    let ack: unknown;
    if (withAck)
      ack = await socket
        .timeout(2000)
        .emitWithAck(event, data)
        .catch((error: Error) => `no ack: ${error.message}`);
    else socket.emit(event, data);
    // Round trip: the server handles messages of one socket in order, so a ping answered means the emit was handled.
    await socket
      .timeout(2000)
      .emitWithAck('ping-sync', null)
      .catch(() => undefined);
    socket.offAny(onAny);
    return withAck ? { ack, received } : { received };
  };

  const TOO_MANY = (retryAfter: number) => ({
    status: 'error',
    statusCode: 429,
    message: 'Too Many Requests',
    retryAfter,
  });

  it("two clients from two addresses: one bucket each (the default 'ip' key, from the handshake)", async () => {
    await boot();
    const a = await connect({ localAddress: '127.0.0.2' });
    const b = await connect({ localAddress: '127.0.0.3' });
    expect(await send(a, 'say', 'a1')).toEqual({ received: [['said', 'a1']] });
    expect(await send(a, 'say', 'a2')).toEqual({ received: [['said', 'a2']] });
    // Refused: an exception event with the 429 meaning and the retry time, in seconds.
    expect(await send(a, 'say', 'a3')).toEqual({ received: [['exception', TOO_MANY(30)]] });
    // The other client's bucket is untouched, and so is a second connection of the first client's address... which shares it.
    expect(await send(b, 'say', 'b1')).toEqual({ received: [['said', 'b1']] });
    const a2 = await connect({ localAddress: '127.0.0.2' });
    expect(await send(a2, 'say', 'again')).toEqual({ received: [['exception', TOO_MANY(30)]] });
  });

  it('behind a proxy: trustProxy reads X-Forwarded-For of the handshake', async () => {
    await boot({ trustProxy: true });
    const a = await connect({ headers: { 'x-forwarded-for': '203.0.113.7' } });
    const b = await connect({ headers: { 'x-forwarded-for': '203.0.113.8' } });
    await send(a, 'say', '1');
    await send(a, 'say', '2');
    expect(await send(a, 'say', '3')).toEqual({ received: [['exception', TOO_MANY(30)]] });
    expect(await send(b, 'say', '1')).toEqual({ received: [['said', '1']] });
  });

  it("the 'connection' key: one bucket per connection, even from one address", async () => {
    await boot();
    const first = await connect({ localAddress: '127.0.0.4' });
    const second = await connect({ localAddress: '127.0.0.4' });
    expect(await send(first, 'typing', null)).toEqual({ received: [['typed', true]] });
    expect(await send(first, 'typing', null)).toEqual({ received: [['exception', TOO_MANY(60)]] });
    expect(await send(second, 'typing', null)).toEqual({ received: [['typed', true]] });
  });

  it('a client that asked for an acknowledgement gets the error there too, exactly once', async () => {
    await boot();
    const a = await connect({ localAddress: '127.0.0.5' });
    expect(await send(a, 'ask', 'q1', true)).toEqual({ ack: 'answer to q1', received: [] });
    const acks: unknown[] = [];
    a.emit('ask', 'q2', (answer: unknown) => acks.push(answer));
    const refused = await send(a, 'ask', 'q3', true);
    // One exception event per refused message (q2's, then q3's), one acknowledgement each.
    expect(refused).toEqual({
      ack: TOO_MANY(60),
      received: [
        ['exception', TOO_MANY(60)],
        ['exception', TOO_MANY(60)],
      ],
    });
    expect(acks).toEqual([TOO_MANY(60)]);
  });

  it('a denial from RateLimiter.enforce() in a gateway gets the same error (Nest gives gateways no global filter)', async () => {
    await boot();
    const a = await connect({ localAddress: '127.0.0.6' });
    expect(await send(a, 'export', null)).toEqual({ received: [['exported', true]] });
    expect(await send(a, 'export', null, true)).toEqual({
      ack: TOO_MANY(3600),
      received: [['exception', TOO_MANY(3600)]],
    });
  });

  it("failMode 'closed' with a failing store: the error says 503, not a crash", async () => {
    const broken = new MemoryStore();
    broken.consume = () => {
      throw new Error('store down');
    };
    await boot({ store: broken, failMode: 'closed' });
    const a = await connect({ localAddress: '127.0.0.7' });
    const unavailable = {
      status: 'error',
      statusCode: 503,
      message: 'Rate limiting is temporarily unavailable',
    };
    expect(await send(a, 'say', 'x', true)).toEqual({
      ack: unavailable,
      received: [['exception', unavailable]],
    });
  });
});
