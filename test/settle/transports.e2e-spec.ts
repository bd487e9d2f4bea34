/**
 * Reserve and settle beyond HTTP: a socket.io gateway (Express), a `ws`
 * gateway (Fastify) and a TCP microservice, each on the memory and the Redis
 * store, with real clients. An overspend puts the budget into debt that the
 * next message waits out (its `retryAfter` saying how long), and an
 * underspend gives tokens back: a `settle` that did nothing on a transport
 * would admit the second message and refuse the fourth.
 */
import { ManualClock, RateLimitModule, type RateLimitStore } from 'nestjs-holdup';
import { STORES, storesOfKind } from '../utils/stores.js';
import {
  connectSocketIo,
  connectWs,
  startGateway,
  startTcpMicroservice,
} from '../utils/transport-servers.js';
import { SpendGateway, SpendMessages } from './transport-handlers.js';

const T0 = 1_700_000_000_000;

/** What one message got: the amount spent, or the refusal's `retryAfter` (seconds). */
type Answer = { spent: unknown } | { refused: unknown };

interface Running {
  spend(amount: number): Promise<Answer>;
  close(): Promise<void>;
}

const moduleWith = (store: RateLimitStore, clock: ManualClock) =>
  RateLimitModule.forRoot({ clock, store });

/**
 * The store's settlements still on their way. A call's settlement is never
 * awaited by the call (docs/settle.md): the next message of a test could
 * reach Redis first (a NOSCRIPT retry, a busy machine), so each step waits
 * for those before it. The store itself is the real one.
 */
function trackSettlements(store: RateLimitStore): () => Promise<unknown> {
  const pending = new Set<Promise<unknown>>();
  const settle = store.settle!.bind(store);
  store.settle = (request) => {
    const answer = Promise.resolve(settle(request));
    const landed: Promise<unknown> = answer.then(
      () => pending.delete(landed),
      () => pending.delete(landed),
    );
    pending.add(landed);
    return answer;
  };
  return () => Promise.all([...pending]);
}

const refusal = (error: { statusCode?: number; retryAfter?: unknown }): Answer => {
  expect(error.statusCode).toBe(429);
  return { refused: error.retryAfter };
};

async function socketIo(store: RateLimitStore, clock: ManualClock): Promise<Running> {
  const { app, url } = await startGateway('socket.io', {
    imports: [moduleWith(store, clock)],
    providers: [SpendGateway],
  });
  const socket = await connectSocketIo(url);
  return {
    // One message at a time: its answer is the next 'spent' or 'exception' event.
    spend: (amount) =>
      new Promise<Answer>((resolve) => {
        const answered = (answer: Answer) => {
          socket.off('spent', spent);
          socket.off('exception', refused);
          resolve(answer);
        };
        const spent = (data: unknown) => answered({ spent: data });
        const refused = (data: { statusCode?: number; retryAfter?: unknown }) =>
          answered(refusal(data));
        socket.on('spent', spent);
        socket.on('exception', refused);
        socket.emit('spend', amount);
      }),
    async close() {
      socket.disconnect();
      await app.close();
    },
  };
}

async function ws(store: RateLimitStore, clock: ManualClock): Promise<Running> {
  const { app, url } = await startGateway('ws', {
    imports: [moduleWith(store, clock)],
    providers: [SpendGateway],
  });
  const socket = await connectWs(url);
  return {
    spend: (amount) =>
      new Promise<Answer>((resolve) => {
        socket.once('message', (frame) => {
          const { event, data } = JSON.parse(String(frame)) as { event: string; data: unknown };
          resolve(
            event === 'spent'
              ? { spent: data }
              : refusal(data as { statusCode?: number; retryAfter?: unknown }),
          );
        });
        socket.send(JSON.stringify({ event: 'spend', data: amount }));
      }),
    async close() {
      socket.terminate();
      await app.close();
    },
  };
}

async function tcp(store: RateLimitStore, clock: ManualClock): Promise<Running> {
  const { client, close } = await startTcpMicroservice({
    imports: [moduleWith(store, clock)],
    controllers: [SpendMessages],
  });
  return {
    spend: (amount) =>
      client.send('spend', amount).then(
        (response) => ({ spent: (response as { data: unknown }).data }),
        (error: { statusCode?: number; retryAfter?: unknown }) => refusal(error),
      ),
    close,
  };
}

const TRANSPORTS = [
  ['socket.io gateway', socketIo],
  ['ws gateway', ws],
  ['TCP microservice', tcp],
] as const;

describe.each(STORES)('settle beyond HTTP (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(TRANSPORTS)('%s', (name, boot) => {
    let running: Running;
    let clock: ManualClock;
    let settled: () => Promise<unknown>;
    beforeEach(async () => {
      clock = new ManualClock(T0);
      const store = makeStore(`settle-${kind}-${name.split(' ')[0]}`);
      settled = trackSettlements(store);
      running = await boot(store, clock);
    });
    afterEach(() => running?.close());

    /** One message, once the settlements of those before it have landed. */
    const spend = async (amount: number) => {
      await settled();
      return running.spend(amount);
    };

    it('an overspend is debt the next message waits out; an underspend gives tokens back', async () => {
      // Reserved 100, spent 1,500: 1,000 - 100 - 1,400 = 500 below zero.
      expect(await spend(1500)).toEqual({ spent: 1500 });
      // A message of 100 needs 600 tokens back at 100 a second.
      expect(await spend(100)).toEqual({ refused: 6 });
      clock.advance(5_999);
      expect(await spend(100)).toEqual({ refused: 1 });
      clock.advance(1);
      // 100 in the bucket: reserved, then all of it given back (spent 0).
      expect(await spend(0)).toEqual({ spent: 0 });
      expect(await spend(100)).toEqual({ spent: 100 });
      expect(await spend(100)).toEqual({ refused: 1 });
    });
  });
});
