/**
 * Adaptive concurrency beyond HTTP: a socket.io gateway (Express), a `ws`
 * gateway (Fastify) and a TCP microservice, with real clients, on the
 * module's ManualClock. The limit in force refuses in the transport's own
 * terms, the backlog holds a caller until a slot frees or its timeout, and
 * the controller hears each call's end: the transport's own errors
 * (`WsException`, `RpcException`) are failures that cut the limit, a 4xx is not.
 */
import { MemoryStore, RateLimiter, RateLimitModule } from 'nestjs-holdup';
import {
  connectSocketIo,
  connectWs,
  startGateway,
  startTcpMicroservice,
} from '../utils/transport-servers.js';
import {
  AdaptiveGateway,
  AdaptiveMessages,
  adaptiveClock,
  adaptiveHeld,
} from './adaptive-transport-handlers.js';
import { until } from '../utils/time.js';

/** What a call got: the handler's answer, or the error object the client received. */
type Outcome = { ok: unknown } | { error: unknown };

interface Running {
  readonly limiter: RateLimiter;
  send(pattern: 'queued' | 'judged', mode: string): Promise<Outcome>;
  close(): Promise<void>;
}

const rateLimit = () => RateLimitModule.forRoot({ clock: adaptiveClock, store: new MemoryStore() });

/** Each call on a connection of its own: its answer is the first event the connection gets. */
async function socketIo(): Promise<Running> {
  const { app, url } = await startGateway('socket.io', {
    imports: [rateLimit()],
    providers: [AdaptiveGateway],
  });
  return {
    limiter: app.get(RateLimiter),
    async send(pattern, mode) {
      const socket = await connectSocketIo(url);
      const outcome = new Promise<Outcome>((resolve) => {
        socket.once('worked', (data: unknown) => resolve({ ok: data }));
        socket.once('exception', (error: unknown) => resolve({ error }));
      });
      socket.emit(pattern, mode);
      return outcome.finally(() => socket.disconnect());
    },
    close: () => app.close(),
  };
}

async function ws(): Promise<Running> {
  const { app, url } = await startGateway('ws', {
    imports: [rateLimit()],
    providers: [AdaptiveGateway],
  });
  return {
    limiter: app.get(RateLimiter),
    async send(pattern, mode) {
      const socket = await connectWs(url);
      const outcome = new Promise<Outcome>((resolve) =>
        socket.once('message', (frame) => {
          const { event, data } = JSON.parse(String(frame)) as { event: string; data: unknown };
          resolve(event === 'worked' ? { ok: data } : { error: data });
        }),
      );
      socket.send(JSON.stringify({ event: pattern, data: mode }));
      return outcome.finally(() => socket.terminate());
    },
    close: () => app.close(),
  };
}

async function tcp(): Promise<Running> {
  const { microservice, client, close } = await startTcpMicroservice({
    imports: [rateLimit()],
    controllers: [AdaptiveMessages],
  });
  return {
    limiter: microservice.get(RateLimiter),
    send: (pattern, mode) =>
      client.send(pattern, mode).then(
        (ok) => ({ ok }),
        (error: unknown) => ({ error }),
      ),
    close,
  };
}

const TRANSPORTS = [
  ['socket.io gateway', socketIo],
  ['ws gateway', ws],
  ['TCP microservice', tcp],
] as const;

const TOO_MANY = { status: 'error', statusCode: 429, message: 'Too Many Requests', retryAfter: 1 };

describe.each(TRANSPORTS)('adaptive concurrency over a %s', (_name, boot) => {
  let running: Running;
  beforeEach(async () => {
    adaptiveHeld.reset();
    running = await boot();
  });
  afterEach(async () => {
    adaptiveHeld.release();
    await running?.close();
  });

  const state = (name: string) => running.limiter.concurrencyLimit(name)[0];

  it('the limit in force holds the caller beyond it in the backlog, refuses one beyond the backlog, and times the wait out on the module clock', async () => {
    const first = running.send('queued', 'hold');
    await until(() => adaptiveHeld.now === 1, 100_000);
    const waiting = running.send('queued', 'ok');
    await until(() => state('queued')?.queued === 1, 100_000);
    expect(state('queued')).toMatchObject({ limit: 1, inFlight: 1, queued: 1 });
    // The backlog (size 1) is full: refused at once.
    expect(await running.send('queued', 'ok')).toEqual({ error: TOO_MANY });
    adaptiveHeld.release();
    expect(await first).toEqual({ ok: 'done hold' });
    // The freed slot went to the waiter.
    expect(await waiting).toEqual({ ok: 'done ok' });

    adaptiveHeld.reset();
    const again = running.send('queued', 'hold');
    await until(() => adaptiveHeld.now === 1, 100_000);
    const late = running.send('queued', 'ok');
    await until(() => state('queued')?.queued === 1, 100_000);
    adaptiveClock.advance(1_000);
    expect(await late).toEqual({ error: TOO_MANY });
    expect(state('queued')).toMatchObject({ inFlight: 1, queued: 0 });
    adaptiveHeld.release();
    expect(await again).toEqual({ ok: 'done hold' });
  });

  it("the transport's own errors are failures that cut the limit; a 4xx is not", async () => {
    expect(state('judged')).toBeUndefined();
    // A window: 8 calls (twice the limit) over at least 10 ms (2 ms each).
    for (let i = 0; i < 8; i++)
      expect(await running.send('judged', 'reject')).toMatchObject({ error: expect.anything() });
    expect(state('judged')).toMatchObject({ limit: 4, inFlight: 0, noLoadRttMs: 2 });
    for (let i = 0; i < 8; i++)
      expect(await running.send('judged', 'fail')).toMatchObject({ error: expect.anything() });
    // Every call of the window failed: the limit halves.
    expect(state('judged')).toMatchObject({ limit: 2, inFlight: 0 });
  });
});
