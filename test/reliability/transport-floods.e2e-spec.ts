/**
 * Floods of distinct callers on the transports beside HTTP (issue 26, item
 * 9): GraphQL on Mercurius (Fastify, real HTTP) and a TCP microservice (a
 * real socket, Nest's framing), each on a MemoryStore of fewer keys than callers,
 * a limit of burst 2, one a minute, keyed by what the caller sends (an API
 * key header, a tenant id in the message): what an attacker who mints
 * identities does. The module's clock stands still (no refill).
 *
 * - Callers who ask once each: a victim refused before the flood stays
 *   refused all through it (its bucket, drained, is kept over theirs, which
 *   are not); a caller after the flood gets its 2, then is refused; never
 *   more than `maxKeys` buckets; no log line (a refusal answers the caller).
 * - Callers who drain their own bucket (3 asks each: 2 admitted, 1 refused):
 *   every caller limited, buckets bounded, no log line; but the victim's
 *   bucket is as drained as theirs, so eviction (bounded memory must forget
 *   someone) can drop it and it gets its burst again: pinned below as a
 *   finding (docs/reliability.md), not a guarantee.
 * - Events (TCP): refused events, which have nobody to answer, are said once
 *   per burst.
 *
 * HOLDUP_REPORT=1 prints the figures (for docs/reliability.md).
 */
import type { AddressInfo, Server } from 'node:net';
import http from 'node:http';
import { Controller, type INestApplication, type INestMicroservice } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EventPattern, MessagePattern, Payload, Transport } from '@nestjs/microservices';
import { Query, Resolver } from '@nestjs/graphql';
import { ManualClock, MemoryStore, RateLimit, RateLimitModule } from 'nestjs-holdup';
import { GRAPHQL_DRIVERS } from '../graphql/graphql-drivers.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { TcpMessageClient } from '../utils/tcp-message-client.js';

/** Buckets the store may hold: below the callers, so that eviction runs. */
const MAX_KEYS = { graphql: 100, tcp: 500 };
const report = (figures: object) => {
  if (process.env.HOLDUP_REPORT) process.stdout.write(`${JSON.stringify(figures)}\n`);
};

const callerOf = (data: unknown) => String((data as { caller?: unknown })?.caller);

/** Per tenant, a caller-minted id: burst 2, one a minute. */
@Controller()
class FloodMessages {
  static eventsRun = 0;

  @RateLimit({
    name: 'quote',
    rate: '1/min',
    burst: 2,
    key: (ctx) => callerOf(ctx.switchToRpc().getData()),
  })
  @MessagePattern('quote')
  quote(@Payload() data: { caller: string }) {
    return data.caller;
  }

  @RateLimit({
    name: 'audit',
    rate: '1/min',
    burst: 2,
    key: (ctx) => callerOf(ctx.switchToRpc().getData()),
  })
  @EventPattern('audit')
  audit(@Payload() entry: { caller: string }) {
    if (entry.caller) FloodMessages.eventsRun++;
  }
}

@Resolver()
class FloodResolver {
  @RateLimit({ name: 'quote', rate: '1/min', burst: 2, key: 'header:x-api-key' })
  @Query('quote')
  quote() {
    return 42;
  }
}

/** What one transport answers a caller: 'admitted', or the refusal it got. */
type Ask = (caller: string) => Promise<string>;

/**
 * The two floods on one transport: `callers` minted identities asking once
 * each, then `callers` more asking three times each; a victim (drained
 * before) asked every `every` callers. Returns the figures.
 */
async function flood(ask: Ask, store: MemoryStore, callers: number, refused: string, every = 50) {
  expect([await ask('victim'), await ask('victim'), await ask('victim')]).toEqual([
    'admitted',
    'admitted',
    refused,
  ]);
  const run = async (label: string, asks: number) => {
    const answers: Record<string, number> = {};
    let victimAdmitted = 0;
    let largestStore = 0;
    for (let i = 0; i < callers; i += every) {
      const batch = Array.from({ length: every }, (_, j) => `${label}-${i + j}`);
      for (let n = 0; n < asks; n++) {
        const got = await Promise.all(batch.map(ask));
        for (const answer of got)
          answers[`${n + 1}: ${answer}`] = (answers[`${n + 1}: ${answer}`] ?? 0) + 1;
      }
      if ((await ask('victim')) === 'admitted') victimAdmitted++;
      largestStore = Math.max(largestStore, store.size);
    }
    return { answers, victimAdmitted, victimAsks: callers / every, largestStore };
  };
  const once = await run('once', 1);
  const late = [await ask('late'), await ask('late'), await ask('late')];
  const drained = await run('drained', 3);
  return { once, late, drained };
}

describe('floods of distinct callers beside HTTP', () => {
  const logs = silenceRateLimitLogs();
  /** What the library said (Nest's start-up and mapping lines left out). */
  const said = () =>
    logs
      .messages()
      .filter(
        (line) =>
          !/dependencies initialized|Mapped \{|successfully started|RoutesResolver|RouterExplorer/.test(
            line,
          ),
      );

  const expectFlood = (
    figures: Awaited<ReturnType<typeof flood>>,
    callers: number,
    refused: string,
    maxKeys: number,
  ) => {
    expect(figures.once.answers).toEqual({ '1: admitted': callers });
    expect(figures.once.victimAdmitted).toBe(0);
    expect(figures.late).toEqual(['admitted', 'admitted', refused]);
    expect(figures.drained.answers).toEqual({
      '1: admitted': callers,
      '2: admitted': callers,
      [`3: ${refused}`]: callers,
    });
    expect(Math.max(figures.once.largestStore, figures.drained.largestStore)).toBeLessThanOrEqual(
      maxKeys,
    );
    expect(said()).toEqual([]);
    // Finding, pinned: a drained victim among drained callers can be evicted, and admitted again.
    expect(figures.drained.victimAdmitted).toBeGreaterThan(0);
  };

  describe('GraphQL on Mercurius (Fastify)', () => {
    let app: INestApplication;
    let store: MemoryStore;
    let agent: http.Agent;
    let port: number;
    const CALLERS = 300;
    const mercurius = GRAPHQL_DRIVERS.find((driver) => driver.name.startsWith('Mercurius'))!;
    beforeAll(async () => {
      store = new MemoryStore({ maxKeys: MAX_KEYS.graphql });
      const moduleRef = await Test.createTestingModule({
        imports: [
          RateLimitModule.forRoot({ store, clock: new ManualClock(1_700_000_000_000) }),
          mercurius.graphql({ typeDefs: 'type Query { quote: Int }' }, ['guards']),
        ],
        providers: [FloodResolver],
      }).compile();
      app = moduleRef.createNestApplication(mercurius.adapter());
      await app.listen(0, '127.0.0.1');
      port = (app.getHttpServer().address() as AddressInfo).port;
      agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    });
    afterAll(async () => {
      agent?.destroy();
      await app?.close();
    });

    const ask: Ask = (apiKey) =>
      new Promise((resolve) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/graphql',
            agent,
            headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => {
              const body = JSON.parse(text) as {
                data?: { quote: number | null };
                errors?: { extensions?: { code?: string } }[];
              };
              resolve(
                body.data?.quote === 42
                  ? 'admitted'
                  : (body.errors?.[0]?.extensions?.code ?? `HTTP ${res.statusCode}`),
              );
            });
          },
        );
        req.on('error', (error) => resolve(`error ${error.message}`));
        req.end(JSON.stringify({ query: '{ quote }' }));
      });

    it(`${CALLERS} minted API keys asking once, then ${CALLERS} draining their own: limited, at most ${MAX_KEYS.graphql} buckets, no log line`, async () => {
      logs.clear();
      const figures = await flood(ask, store, CALLERS, 'TOO_MANY_REQUESTS');
      report({ transport: 'Mercurius', callers: CALLERS, ...figures, lines: said().length });
      expectFlood(figures, CALLERS, 'TOO_MANY_REQUESTS', MAX_KEYS.graphql);
    });
  });

  describe('TCP microservice', () => {
    let microservice: INestMicroservice;
    let store: MemoryStore;
    let client: TcpMessageClient;
    const CALLERS = 2_000;
    beforeAll(async () => {
      store = new MemoryStore({ maxKeys: MAX_KEYS.tcp });
      const moduleRef = await Test.createTestingModule({
        imports: [RateLimitModule.forRoot({ store, clock: new ManualClock(1_700_000_000_000) })],
        controllers: [FloodMessages],
      }).compile();
      microservice = moduleRef.createNestMicroservice({
        transport: Transport.TCP,
        options: { host: '127.0.0.1', port: 0 },
      });
      await microservice.listen();
      const port = (microservice.unwrap<Server>().address() as AddressInfo).port;
      client = await TcpMessageClient.connect(port, '127.0.0.1');
    });
    afterAll(async () => {
      client?.close();
      await microservice?.close();
    });

    const ask: Ask = (caller) =>
      client.send('quote', { caller }).then(
        () => 'admitted',
        (error: { statusCode?: number }) => `error ${error?.statusCode}`,
      );

    it(`${CALLERS} minted tenant ids asking once, then ${CALLERS} draining their own: limited, at most ${MAX_KEYS.tcp} buckets, no log line`, async () => {
      logs.clear();
      const figures = await flood(ask, store, CALLERS, 'error 429', 250);
      report({ transport: 'TCP messages', callers: CALLERS, ...figures, lines: said().length });
      expectFlood(figures, CALLERS, 'error 429', MAX_KEYS.tcp);
    });

    it(`${CALLERS} minted tenant ids, three events each: two handled (the burst), the refusals said once for the burst`, async () => {
      logs.clear();
      FloodMessages.eventsRun = 0;
      for (let i = 0; i < CALLERS; i++) {
        for (let n = 0; n < 3; n++) client.emit('audit', { caller: `event-${i}` });
      }
      // Events have no answer: a message after them, on the same socket, is handled after them.
      while (FloodMessages.eventsRun < 2 * CALLERS) await ask('victim');
      await ask('victim');
      report({
        transport: 'TCP events',
        callers: CALLERS,
        eventsRun: FloodMessages.eventsRun,
        lines: said(),
      });
      expect(FloodMessages.eventsRun).toBe(2 * CALLERS);
      expect(said()).toEqual([expect.stringContaining('audit')]);
      expect(store.size).toBeLessThanOrEqual(MAX_KEYS.tcp);
    });
  });
});
