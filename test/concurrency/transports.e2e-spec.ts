/**
 * A concurrency limit on every transport with a completion: the slot is
 * held while the handler runs (or its stream is open), refused meanwhile
 * in the transport's own terms, and released when it completes or fails.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { AddressInfo, Server } from 'node:net';
import type { INestApplication, INestMicroservice } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import { Transport } from '@nestjs/microservices';
import request from 'supertest';
import { WebSocket } from 'ws';
import { MemoryStore, RateLimitModule } from 'nestjs-holdup';
import { TcpMessageClient } from '../utils/tcp-message-client.js';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { makeStore, STORES, type StoreFixture } from '../utils/stores.js';
import { GenerationsController, inFlight } from './generations.controller.js';
import {
  held,
  WORK_TYPE_DEFS,
  WorkGateway,
  WorkMessages,
  WorkResolver,
} from './transport-handlers.js';
import { until } from '../utils/time.js';

const later = (ms: number, action: () => void) => setTimeout(action, ms);
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ ok: value }),
    (error: unknown) => ({ error }),
  );

beforeEach(() => {
  held.reset();
  held.max = 0;
});
afterEach(() => held.release());

const DRIVERS = [
  {
    name: 'Apollo on Express',
    graphql: () =>
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        typeDefs: WORK_TYPE_DEFS,
        includeStacktraceInErrorResponses: false,
      }),
    adapter: () => new ExpressAdapter(),
  },
  {
    name: 'Mercurius on Fastify',
    graphql: () =>
      GraphQLModule.forRoot<MercuriusDriverConfig>({
        driver: MercuriusDriver,
        typeDefs: WORK_TYPE_DEFS,
      }),
    adapter: () => new FastifyAdapter(),
  },
] as const;

describe.each(DRIVERS)('concurrency over GraphQL, $name', (driver) => {
  let app: INestApplication;
  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ store: new MemoryStore() }), driver.graphql()],
      providers: [WorkResolver],
    }).compile();
    app = moduleRef.createNestApplication(driver.adapter(), { logger: false });
    await app.init();
    if (driver.name === 'Mercurius on Fastify') await app.getHttpAdapter().getInstance().ready();
  });
  afterEach(() => app?.close());

  const query = (text: string) =>
    request(app.getHttpServer()).post('/graphql').send({ query: text });

  it('released on completion and on error; two fields at once: one refused', async () => {
    const first = await query('{ work(mode: "ok") }');
    expect(first.body.data).toEqual({ work: 'done ok' });
    expect(first.headers['ratelimit-policy']).toBe('"work";q=1;qu="concurrent-requests"');
    expect(first.headers['ratelimit']).toBe('"work";r=0');
    expect((await query('{ work(mode: "ok") }')).body.data).toEqual({ work: 'done ok' });

    const failed = await query('{ work(mode: "fail") }');
    expect(failed.body.errors[0].message).toBe('work failed');
    expect((await query('{ work(mode: "ok") }')).body.data).toEqual({ work: 'done ok' });

    // Released once one field holds the slot and the other was refused (not after a fixed
    // 200 ms, which a stalled machine can outlast: the first field done before the second
    // asks, both would be admitted).
    const denied: unknown[] = [];
    const onDecision = (event: unknown) => {
      if ((event as { result?: string }).result === 'denied') denied.push(event);
    };
    subscribe('nestjs-holdup:decision', onDecision);
    let both: Awaited<ReturnType<typeof query>>;
    try {
      const answer = query('{ a: work(mode: "hold") b: work(mode: "hold") }').then((r) => r);
      await until(() => held.now === 1 && denied.length === 1);
      held.release();
      both = await answer;
    } finally {
      unsubscribe('nestjs-holdup:decision', onDecision);
    }
    expect(held.max).toBe(1);
    const { data, errors } = both.body as {
      data: Record<string, string | null>;
      errors: { path: string[]; extensions: { code: string } }[];
    };
    expect(Object.values(data).sort()).toEqual(['done hold', null]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.extensions.code).toBe('TOO_MANY_REQUESTS');
    expect((await query('{ work(mode: "ok") }')).body.data).toEqual({ work: 'done ok' });
  });
});

describe('concurrency over a WebSocket gateway (ws)', () => {
  let app: INestApplication;
  let url: string;
  const sockets: WebSocket[] = [];
  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ store: new MemoryStore() })],
      providers: [WorkGateway],
    }).compile();
    app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    url = `ws://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await app?.close();
  });
  const connect = async () => {
    const socket = new WebSocket(url);
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return socket;
  };
  const send = (socket: WebSocket, mode: string) =>
    new Promise<unknown>((resolve) => {
      socket.once('message', (frame) => resolve(JSON.parse(String(frame))));
      socket.send(JSON.stringify({ event: 'work', data: mode }));
    });

  it('held while the handler runs, refused meanwhile, released on completion and on error', async () => {
    const a = await connect();
    const b = await connect();
    const running = send(a, 'hold');
    await until(() => held.now === 1);
    expect(await send(b, 'ok')).toEqual({
      event: 'exception',
      data: { status: 'error', statusCode: 429, message: 'Too Many Requests', retryAfter: 1 },
    });
    held.release();
    expect(await running).toEqual({ event: 'worked', data: 'done hold' });
    expect(await send(b, 'ok')).toEqual({ event: 'worked', data: 'done ok' });
    expect(await send(b, 'fail')).toMatchObject({ event: 'exception' });
    expect(await send(a, 'ok')).toEqual({ event: 'worked', data: 'done ok' });
  });
});

describe('concurrency over a TCP microservice', () => {
  let microservice: INestMicroservice;
  let client: TcpMessageClient;
  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ store: new MemoryStore() })],
      controllers: [WorkMessages],
    }).compile();
    microservice = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: 0 },
    });
    microservice.useLogger(false);
    await microservice.listen();
    client = await TcpMessageClient.connect(
      (microservice.unwrap<Server>().address() as AddressInfo).port,
      '127.0.0.1',
    );
  });
  afterEach(async () => {
    client?.close();
    await microservice?.close();
  });

  it('held while the handler runs, refused meanwhile, released on completion and on error', async () => {
    const running = outcome(client.send('work', 'hold'));
    await until(() => held.now === 1);
    expect(await outcome(client.send('work', 'ok'))).toEqual({
      error: { status: 'error', statusCode: 429, message: 'Too Many Requests', retryAfter: 1 },
    });
    held.release();
    expect(await running).toEqual({ ok: 'done hold' });
    expect(await outcome(client.send('work', 'ok'))).toEqual({ ok: 'done ok' });
    expect(await outcome(client.send('work', 'fail'))).toEqual({
      error: { status: 'error', message: 'work failed' },
    });
    expect(await outcome(client.send('work', 'ok'))).toEqual({ ok: 'done ok' });
  });
});

const SSE_CASES = PLATFORMS.flatMap((platform) => STORES.map((kind) => [platform, kind] as const));

describe.each(SSE_CASES)('concurrency over server-sent events (%s, %s store)', (platform, kind) => {
  let app: INestApplication;
  let url: string;
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await makeStore(kind, `sse-${platform}`);
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store: fixture.store })],
      controllers: [GenerationsController],
    });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    inFlight.reset();
  });
  afterEach(async () => {
    inFlight.release();
    await app?.close();
    await fixture?.release();
  });

  const open = () => {
    const stream = request(url)
      .get('/stream')
      .set('x-api-key', 's')
      .buffer(true)
      .parse((res, done) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => done(null, body));
      });
    return stream;
  };

  /**
   * A new stream's status once the slot is free: the server gives the slot back when it has
   * finished the stream, which the client can see end a moment before (a Redis call, too).
   */
  const openOnceFree = async () => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const { status } = await open();
      if (status !== 429 || Date.now() > deadline) return status;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('a stream holds its slot until it completes', async () => {
    const first = open().then((r) => r);
    await until(() => inFlight.now === 1);
    const refused = await request(url).get('/stream').set('x-api-key', 's');
    expect(refused.status).toBe(429);
    inFlight.release();
    const done = await first;
    expect(done.status).toBe(200);
    expect(String(done.body)).toContain('"step":2');
    inFlight.reset();
    later(100, () => inFlight.release());
    expect(await openOnceFree()).toBe(200);
  });

  it('a client that goes away mid-stream frees the slot', async () => {
    const aborted = open();
    aborted.catch(() => undefined);
    await until(() => inFlight.now === 1);
    aborted.abort();
    await until(() => inFlight.now === 0);
    later(100, () => inFlight.release());
    expect(await openOnceFree()).toBe(200);
  });
});
