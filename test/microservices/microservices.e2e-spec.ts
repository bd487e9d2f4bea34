/**
 * Microservices end to end, with real clients over real sockets: a TCP
 * microservice (peers told apart by their address), the Redis transport
 * (no peer address: a key function, or a refusal said once), `@EventPattern`
 * (refusals counted and said once per burst), and hybrid applications with
 * both `inheritAppConfig` settings (limits enforced exactly once).
 */
import type { AddressInfo, Server } from 'node:net';
import { type INestApplication, type INestMicroservice } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import request from 'supertest';
import { firstValueFrom } from 'rxjs';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { sharedRedisUrl } from '../utils/redis-harness.js';
import { TcpMessageClient } from '../utils/tcp-message-client.js';
import {
  BadMessageController,
  KeyedController,
  OrdersController,
  received,
} from './orders.controller.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

/** The port a TCP microservice listens on (it was given port 0). */
function portOf(microservice: INestMicroservice): number {
  return (microservice.unwrap<Server>().address() as AddressInfo).port;
}

const TOO_MANY = (retryAfter: number) => ({
  status: 'error',
  statusCode: 429,
  message: 'Too Many Requests',
  retryAfter,
});
const rateLimit = (options: RateLimitModuleOptions = {}) =>
  RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000), ...options });
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ ok: value }),
    (error: unknown) => ({ error }),
  );

describe('microservices', () => {
  const closing: (() => Promise<unknown> | void)[] = [];
  const logs = silenceRateLimitLogs();
  beforeEach(() => {
    received.length = 0;
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });
  const warnings = (containing: string) =>
    logs.warn.mock.calls
      .map(([message]) => String(message))
      .filter((message) => message.includes(containing));

  /** A TCP microservice on a port the system picks (port 0: no race with other suites' servers); its port. */
  const tcpMicroservice = async (options?: RateLimitModuleOptions) => {
    const moduleRef = await Test.createTestingModule({
      imports: [rateLimit(options)],
      controllers: [OrdersController],
    }).compile();
    const app: INestMicroservice = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: 0 },
    });
    await app.listen();
    closing.push(() => app.close());
    return portOf(app);
  };
  const tcpClient = (port: number): ClientProxy => {
    const client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    closing.push(() => client.close());
    return client;
  };

  describe('TCP', () => {
    it("two peers from two addresses: one bucket each (the default 'ip' key is the TCP peer)", async () => {
      const port = await tcpMicroservice();
      const a = await TcpMessageClient.connect(port, '127.0.0.2');
      const b = await TcpMessageClient.connect(port, '127.0.0.3');
      closing.push(
        () => a.close(),
        () => b.close(),
      );
      expect(await outcome(a.send('quote', 'x'))).toEqual({ ok: { item: 'x', price: 42 } });
      expect(await outcome(a.send('quote', 'y'))).toEqual({ ok: { item: 'y', price: 42 } });
      // Refused: the client's send() rejects with the 429 meaning and the retry time.
      expect(await outcome(a.send('quote', 'z'))).toEqual({ error: TOO_MANY(30) });
      expect(await outcome(b.send('quote', 'x'))).toEqual({ ok: { item: 'x', price: 42 } });
    });

    it("charge: 'failures' over TCP: successes give their token back, the first failure spends it", async () => {
      const client = tcpClient(await tcpMicroservice());
      for (let i = 0; i < 3; i++)
        expect(await firstValueFrom(client.send('redeem', 'valid'))).toBe('redeemed');
      await expect(firstValueFrom(client.send('redeem', 'forged'))).rejects.toEqual({
        status: 'error',
        message: 'invalid code',
      });
      await expect(firstValueFrom(client.send('redeem', 'valid'))).rejects.toEqual(TOO_MANY(60));
    });

    it('through ClientProxy: firstValueFrom(client.send(...)) rejects with the error object', async () => {
      const client = tcpClient(await tcpMicroservice());
      await firstValueFrom(client.send('quote', 'a'));
      await firstValueFrom(client.send('quote', 'b'));
      await expect(firstValueFrom(client.send('quote', 'c'))).rejects.toEqual(TOO_MANY(30));
    });

    it('a denial from RateLimiter.enforce() in a message handler: the same error object', async () => {
      const client = tcpClient(await tcpMicroservice());
      expect(await firstValueFrom(client.send('export', {}))).toBe('exported');
      await expect(firstValueFrom(client.send('export', {}))).rejects.toEqual(TOO_MANY(3600));
    });

    it('refused events are counted and said once per burst, not dropped silently and not logged per event', async () => {
      const client = tcpClient(await tcpMicroservice());
      for (let i = 0; i < 5; i++) await firstValueFrom(client.emit('audit', { i }));
      await firstValueFrom(client.send('quote', 'sync')); // the events before it are handled
      expect(received).toEqual([{ i: 0 }]);
      expect(warnings('OrdersController.audit')).toEqual([
        'RateLimit: OrdersController.audit: refusing events over "audit" for the next 60 s; the events refused meanwhile are counted and said when this burst ends.',
      ]);
      await closing.shift()?.(); // closing the application says what the open burst counted
      expect(warnings('event(s) refused')).toEqual([
        'RateLimit: OrdersController.audit: 4 event(s) refused in the last burst over "audit".',
      ]);
    });

    it('a bad limit on a message handler fails the bootstrap, with the message an HTTP route gets', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [rateLimit()],
        controllers: [BadMessageController],
      }).compile();
      const app = moduleRef.createNestMicroservice({
        transport: Transport.TCP,
        options: { host: '127.0.0.1', port: 0 },
      });
      await expect(app.listen()).rejects.toThrow(
        'RateLimit: BadMessageController.bad, limit "default": rate must be',
      );
      await app.close().catch(() => undefined);
    });
  });

  describe('Redis transport (no peer address)', () => {
    const redisMicroservice = async () => {
      const { hostname, port } = new URL(sharedRedisUrl());
      const transport = {
        transport: Transport.REDIS,
        options: { host: hostname, port: Number(port) },
      } as const;
      const moduleRef = await Test.createTestingModule({
        imports: [rateLimit()],
        controllers: [KeyedController],
      }).compile();
      const app = moduleRef.createNestMicroservice(transport);
      await app.listen();
      closing.push(() => app.close());
      const client = ClientProxyFactory.create(transport);
      closing.push(() => client.close());
      await client.connect();
      return client;
    };

    it('a key function tells callers apart', async () => {
      const client = await redisMicroservice();
      expect(await firstValueFrom(client.send('keyed', { tenant: 'acme' }))).toBe('acme');
      await expect(firstValueFrom(client.send('keyed', { tenant: 'acme' }))).rejects.toEqual(
        TOO_MANY(60),
      );
      expect(await firstValueFrom(client.send('keyed', { tenant: 'globex' }))).toBe('globex');
    });

    it("the 'ip' key with no address: calls are refused (never one bucket for all), and the log says once to give a key function", async () => {
      const client = await redisMicroservice();
      for (let i = 0; i < 3; i++) {
        await expect(firstValueFrom(client.send('unkeyed', {}))).rejects.toEqual({
          status: 'error',
          message: 'Internal server error',
        });
      }
      expect(warnings('KeyedController.unkeyed')).toEqual([
        expect.stringContaining(
          'this call has no client address to key by (its transport gives none, or the connection is gone); give the limit a key function',
        ),
      ]);
    });
  });

  describe.each([false, true])(
    'hybrid application (HTTP + TCP), inheritAppConfig: %s',
    (inheritAppConfig) => {
      it('the limits of message handlers are enforced, exactly once per call; the HTTP routes keep theirs', async () => {
        const moduleRef = await Test.createTestingModule({
          imports: [rateLimit()],
          controllers: [OrdersController],
        }).compile();
        const app: INestApplication = moduleRef.createNestApplication({ logger: false });
        const microservice: INestMicroservice = app.connectMicroservice(
          { transport: Transport.TCP, options: { host: '127.0.0.1', port: 0 } },
          { inheritAppConfig },
        );
        await app.startAllMicroservices();
        await app.init();
        closing.push(() => app.close());
        const client = tcpClient(portOf(microservice));
        // Burst 2: exactly two admitted (a call charged twice would admit one).
        expect(await firstValueFrom(client.send('quote', 'a'))).toEqual({ item: 'a', price: 42 });
        expect(await firstValueFrom(client.send('quote', 'b'))).toEqual({ item: 'b', price: 42 });
        await expect(firstValueFrom(client.send('quote', 'c'))).rejects.toEqual(TOO_MANY(30));
        await request(app.getHttpServer()).get('/orders').expect(200);
        await request(app.getHttpServer()).get('/orders').expect(429);
      });
    },
  );
});
