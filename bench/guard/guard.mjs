// Guard micro-benchmark: `canActivate` of each guard, called the way Nest's
// router calls it (a fresh ExecutionContextHost per request, the result
// awaited), on guards taken from real Nest applications (Fastify adapter,
// initialised, not listening), without sockets, syscalls or autocannon: the
// per-request cost of the guard alone, which the HTTP runs cannot resolve on
// a noisy machine.
//   node bench/guard/guard.mjs <callsPerRun> <repetitions>
// Prints one JSON line: ns per call of every case in every repetition.
import 'reflect-metadata';
import { Controller, Get, Injectable, Module, UseInterceptors } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer.js';
import { RouterExceptionFilters } from '@nestjs/core/router/router-exception-filters.js';
import { lastValueFrom } from 'rxjs';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import {
  MemoryStore,
  RateLimit,
  RateLimitGuard,
  RateLimitInterceptor,
  RateLimitModule,
} from 'nestjs-holdup';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { floorGuard } from '../lib/floor-guard.mjs';
import { runSeed, shuffledOrder } from '../lib/shuffle.mjs';

// A reader collected on demand, as a pull exporter (Prometheus) would be.
class OnDemandReader extends MetricReader {
  onForceFlush() {
    return Promise.resolve();
  }
  onShutdown() {
    return Promise.resolve();
  }
}

// Never denies, even one client at the ~1M calls/s a tight loop reaches,
// and keeps every client's bucket held between its visits (1 token/s: a
// visit every ~0.2 s drains it by ~0.8 token), as for callers being limited.
const RATE = 1;
const BURST = 1e9;
// The same guard where every visit finds its bucket full again (refilled
// within a microsecond): each request inserts a new bucket and the sweep
// deletes an old one, the cost of a caller's first request.
const FAST_RATE = 1_000_000;
const CLIENTS = 100_000;
// Plans for the dynamic case: every request is on 'pro', found through its request, as an application would.
const PLANS = { free: { rate: RATE / 2, burst: BURST / 2 }, pro: { rate: RATE, burst: BURST } };
const planOf = (ctx) => ctx.switchToHttp().getRequest().headers['x-plan'] ?? 'pro';

class NoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Reflect.decorate([Injectable()], NoopInterceptor);

class NoopGuard {
  canActivate() {
    return true;
  }
}
Reflect.decorate([Injectable()], NoopGuard);

const FloorGuard = floorGuard(RATE, BURST);
// The denied path (issue 27): one token per 1000 s, a burst of one: after a
// client's first request, every request of it is a 429.
const DENIED = { rate: 1e-3, burst: 1 };
const DENIED_CLIENTS = 1_000;
const FloorDeniedGuard = floorGuard(DENIED.rate, DENIED.burst);

function controller(routeDecorators = []) {
  class HelloController {
    hello() {
      return 'Hello World!';
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(HelloController.prototype, 'hello');
  Object.defineProperty(
    HelloController.prototype,
    'hello',
    Reflect.decorate([Get(), ...routeDecorators], HelloController.prototype, 'hello', descriptor) ??
      descriptor,
  );
  Reflect.decorate([Controller()], HelloController);
  return HelloController;
}

async function app(imports, routeDecorators, guardType) {
  const Hello = controller(routeDecorators);
  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports,
        controllers: [Hello],
        providers: guardType === RateLimitGuard ? [] : [guardType, NoopInterceptor],
      }),
    ],
    AppModule,
  );
  const application = await NestFactory.create(AppModule, new FastifyAdapter(), {
    logger: false,
    abortOnError: false,
  });
  await application.init();
  return { application, guard: application.get(guardType), Hello };
}

// A fresh request per call, as in a server (a guard may attach state to it);
// a response that takes headers like a Fastify reply.
const addresses = Array.from(
  { length: CLIENTS },
  (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
);
// The clients in a random order (issue 27), the same for every case of the run.
const RANDOM_ORDER = shuffledOrder(CLIENTS, 1 << 20);
const randomCases = new Set(['floor-random', 'holdup-random']);
function request(i) {
  const ip = addresses[i];
  return { ip, socket: { remoteAddress: ip }, headers: {} };
}
function reply() {
  return {
    headers: {},
    // What Nest's Fastify adapter reads and calls to answer an exception (isHeadersSent, reply).
    sent: false,
    raw: { headersSent: false },
    statusCode: 200,
    body: undefined,
    status(code) {
      this.statusCode = code;
      return this;
    },
    send(body) {
      this.body = body;
      return this;
    },
    getHeader(name) {
      return this.headers[name.toLowerCase()];
    },
    header(name, value) {
      this.headers[name.toLowerCase()] = value;
      return this;
    },
  };
}

/**
 * Cost per call, as CPU time of this process (user + system, GC threads
 * included) rather than wall time: the machine is shared, and another job
 * taking the core stretches wall time, not the CPU time the guard spends.
 * Wall time is kept beside it (`wallSamples`).
 */
const wallSamples = {};
function startTimer() {
  return { wall: process.hrtime.bigint(), cpu: process.cpuUsage() };
}
function stopTimer(start, id, n) {
  const wall = Number(process.hrtime.bigint() - start.wall) / n;
  const cpu = process.cpuUsage(start.cpu);
  (wallSamples[id] ??= []).push(wall);
  return ((cpu.user + cpu.system) * 1000) / n;
}

async function main() {
  const [callsArg, repetitionsArg] = process.argv.slice(2);
  const calls = Number(callsArg);
  const repetitions = Number(repetitionsArg);

  const holdupWith = (metrics) => [
    RateLimitModule.forRoot({
      store: new MemoryStore(),
      defaults: { rate: RATE, burst: BURST, key: 'ip' },
      headers: 'draft',
      metrics,
    }),
  ];
  const holdup = (headers, rate = RATE) => [
    RateLimitModule.forRoot({
      store: new MemoryStore(),
      defaults: { rate, burst: BURST, key: 'ip' },
      headers,
    }),
  ];
  const setups = {
    noop: await app([], [], NoopGuard),
    'floor-denied': await app([], [], FloorDeniedGuard),
    'holdup-denied': await app(
      [
        RateLimitModule.forRoot({
          store: new MemoryStore(),
          defaults: { ...DENIED, key: 'ip' },
          headers: 'draft',
        }),
      ],
      [],
      RateLimitGuard,
    ),
    floor: await app([], [], FloorGuard),
    'floor-random': await app([], [], FloorGuard),
    'holdup-random': await app(holdup('draft'), [], RateLimitGuard),
    holdup: await app(holdup('draft'), [], RateLimitGuard),
    'holdup-noheaders': await app(holdup(false), [], RateLimitGuard),
    'holdup-hot': await app(holdup('draft'), [], RateLimitGuard),
    'holdup-new': await app(holdup('draft', FAST_RATE), [], RateLimitGuard),
    'holdup-adaptive': await app(
      [RateLimitModule.forRoot({ store: new MemoryStore(), headers: 'draft' })],
      [RateLimit({ rate: RATE, burst: BURST, key: 'ip', adaptive: { min: RATE / 10, max: RATE } })],
      RateLimitGuard,
    ),
    throttler: await app(
      [ThrottlerModule.forRoot([{ ttl: 60_000, limit: 1e9 }])],
      [],
      ThrottlerGuard,
    ),
    // The same limit declared on the route, static, and as a plan looked up synchronously per request.
    'holdup-route': await app(
      [RateLimitModule.forRoot({ store: new MemoryStore(), headers: 'draft' })],
      [RateLimit({ rate: RATE, burst: BURST, key: 'ip' })],
      RateLimitGuard,
    ),
    'holdup-dynamic': await app(
      [RateLimitModule.forRoot({ store: new MemoryStore(), headers: 'draft' })],
      [
        RateLimit({
          rate: (ctx) => PLANS[planOf(ctx)].rate,
          burst: (ctx) => PLANS[planOf(ctx)].burst,
          key: 'ip',
        }),
      ],
      RateLimitGuard,
    ),
  };
  // Metrics cases: their exporters subscribe to process-wide channels, which
  // would make every other case publish too, so each is created just before
  // its run and closed after (outside the timing).
  const lazy = {
    // The baseline of the metrics cases: the same app, created the same way, without metrics.
    'holdup-fresh': () => app(holdupWith(undefined), [], RateLimitGuard),
    'holdup-otel': () =>
      app(
        holdupWith({
          openTelemetry: { meterProvider: new MeterProvider({ readers: [new OnDemandReader()] }) },
        }),
        [],
        RateLimitGuard,
      ),
    'holdup-prom': () =>
      app(holdupWith({ prometheus: { registry: new Registry() } }), [], RateLimitGuard),
  };
  // Where the metrics cost goes (issue 27), run only when named in
  // BENCH_GUARD_ONLY, on the OpenTelemetry case: its decisions counted through
  // a listener on the decision channel (owner check, then the count: the
  // wiring before the exporter was handed them directly); counted directly
  // with a listener that does nothing on the channel besides (what another
  // subscriber, such as RateLimitEvents, adds); and nothing counted at all
  // (an app configured for metrics that publishes nothing). They reach into
  // the exporter (an internal of the built package).
  const withOtelSubscriber = (change) => async () => {
    const made = await lazy['holdup-otel']();
    const { RateLimitMetricsExporter } =
      await import('../../dist/esm/lib/observability/metrics/rate-limit-metrics.exporter.js');
    const { rateLimitChannels } =
      await import('../../dist/esm/lib/observability/rate-limit-channels.js');
    change(made.application.get(RateLimitMetricsExporter).subscriber, rateLimitChannels.decision);
    return made;
  };
  const stopCounting = (subscriber) => {
    subscriber.stopDecisions();
    for (const [channel, listener] of subscriber.listeners.splice(0)) channel.unsubscribe(listener);
  };
  const diagnostic = {
    'holdup-otel-via-channel': withOtelSubscriber((subscriber, decision) => {
      subscriber.stopDecisions();
      const { decisions, owner } = subscriber;
      const listener = (event) => {
        if (event.owner === owner) decisions.count(event);
      };
      decision.subscribe(listener);
      subscriber.listeners.push([decision, listener]);
    }),
    'holdup-otel-noop-listener': withOtelSubscriber((subscriber, decision) => {
      const listener = () => {};
      decision.subscribe(listener);
      subscriber.listeners.push([decision, listener]);
    }),
    'holdup-otel-unsubscribed': withOtelSubscriber(stopCounting),
  };
  const clientsOf = {
    'holdup-hot': 1,
    'floor-denied': DENIED_CLIENTS,
    'holdup-denied': DENIED_CLIENTS,
  };
  const deniedCases = new Set(['floor-denied', 'holdup-denied']);
  // Routes with an interceptor: a no-op one (what Nest charges for any interceptor), and an adaptive route (guard + RateLimitInterceptor).
  const noopRoute = await app([], [UseInterceptors(NoopInterceptor)], NoopGuard);
  setups['route-noop-interceptor'] = {
    ...noopRoute,
    guard: undefined,
    interceptor: noopRoute.application.get(NoopInterceptor),
  };
  const adaptiveRoute = setups['holdup-adaptive'];
  setups['route-adaptive'] = {
    ...adaptiveRoute,
    interceptor: adaptiveRoute.application.get(RateLimitInterceptor),
  };

  async function run(id, n) {
    if (lazy[id]) {
      setups[id] = await lazy[id]();
      try {
        // One untimed pass over every client first: the timed run then
        // charges buckets held (as `holdup` does), not 100k first requests
        // filling a fresh store, whose inserts, shard splits and sweeps
        // varied by more than the metrics cost being measured.
        await timed(id, CLIENTS);
        wallSamples[id].pop();
        return await timed(id, n);
      } finally {
        await setups[id].application.close();
      }
    }
    return timed(id, n);
  }

  async function timed(id, n) {
    if (setups[id].interceptor) return timedPipeline(id, n);
    if (deniedCases.has(id)) return timedDenied(id, n);
    const { guard, Hello } = setups[id];
    const handler = Hello.prototype.hello;
    const clients = clientsOf[id] ?? CLIENTS;
    const order = randomCases.has(id) ? RANDOM_ORDER : undefined;
    const response = reply();
    let admitted = 0;
    const start = startTimer();
    for (let i = 0; i < n; i++) {
      const client = order === undefined ? i % clients : order[i & (order.length - 1)];
      const context = new ExecutionContextHost(
        [request(client), response, undefined],
        Hello,
        handler,
      );
      context.setType('http');
      if (await guard.canActivate(context)) admitted++;
    }
    const ns = stopTimer(start, id, n);
    if (admitted !== n) throw new Error(`${id}: ${n - admitted} requests denied`);
    return ns;
  }

  // The denied path as Nest's router takes it: the guard throws, and the
  // route's exceptions handler (the filters of the application: the module's
  // RateLimitExceptionFilter, else Nest's own) answers on the stand-in reply,
  // status, headers and body.
  async function timedDenied(id, n) {
    const { guard, Hello, application } = setups[id];
    const handler = Hello.prototype.hello;
    const exceptions = new RouterExceptionFilters(
      application.container,
      application.config,
      application.getHttpAdapter(),
    ).create(new Hello(), handler, undefined);
    const clients = clientsOf[id];
    let denied = 0;
    let response;
    const start = startTimer();
    for (let i = 0; i < n; i++) {
      response = reply();
      const args = [request(i % clients), response, undefined];
      const context = new ExecutionContextHost(args, Hello, handler);
      context.setType('http');
      try {
        await guard.canActivate(context);
      } catch (error) {
        exceptions.next(error, context);
      }
      if (response.statusCode === 429) denied++;
    }
    const ns = stopTimer(start, id, n);
    // Every client's first request is admitted (the warm-up's); none after.
    const firsts = warmedDenied.has(id) ? 0 : clients;
    warmedDenied.add(id);
    if (denied + firsts < n) throw new Error(`${id}: ${n - denied} requests not denied`);
    deniedAnswers[id] = { headers: Object.keys(response.headers), body: response.body };
    return ns;
  }
  const deniedAnswers = {};
  const warmedDenied = new Set();

  // A route with an interceptor, the way Nest's router runs it: the guard
  // (when there is one) on its own context, then the interceptors through
  // Nest's InterceptorsConsumer, the handler's result awaited as the
  // router's response controller does (lastValueFrom).
  const consumer = new InterceptorsConsumer();
  async function timedPipeline(id, n) {
    const { guard, interceptor, Hello } = setups[id];
    const instance = new Hello();
    const handler = Hello.prototype.hello;
    const clients = clientsOf[id] ?? CLIENTS;
    const response = reply();
    let answered = 0;
    const start = startTimer();
    for (let i = 0; i < n; i++) {
      const args = [request(i % clients), response, undefined];
      if (guard) {
        const context = new ExecutionContextHost(args, Hello, handler);
        context.setType('http');
        if (!(await guard.canActivate(context))) continue;
      }
      const result = await consumer.intercept(
        [interceptor],
        args,
        instance,
        handler,
        async () => handler.call(instance),
        'http',
      );
      if ((await lastValueFrom(result)) === 'Hello World!') answered++;
    }
    const ns = stopTimer(start, id, n);
    if (answered !== n) throw new Error(`${id}: ${n - answered} requests not answered`);
    return ns;
  }

  // BENCH_GUARD_ONLY=holdup: one case (used by the profile in guard/profile.mjs).
  const ids = process.env.BENCH_GUARD_ONLY
    ? process.env.BENCH_GUARD_ONLY.split(',')
    : [...Object.keys(setups), ...Object.keys(lazy)];
  for (const id of ids) if (diagnostic[id]) lazy[id] = diagnostic[id];
  for (const id of ids) await run(id, Math.min(calls, 50_000)); // warm-up
  const samples = Object.fromEntries(ids.map((id) => [id, []]));
  for (let rep = 0; rep < repetitions; rep++) {
    const order = ids.map((_, i) => ids[(i + rep) % ids.length]);
    for (const id of order) samples[id].push(await run(id, calls));
  }
  // What the guards wrote, as a check that headers really were produced.
  const headers = {};
  for (const id of ids) {
    if (setups[id]?.interceptor) continue;
    if (deniedCases.has(id)) {
      headers[id] = deniedAnswers[id]?.headers;
      continue;
    }
    if (lazy[id]) setups[id] = await lazy[id]();
    const response = reply();
    const context = new ExecutionContextHost(
      [request(0), response, undefined],
      setups[id].Hello,
      setups[id].Hello.prototype.hello,
    );
    context.setType('http');
    await setups[id].guard.canActivate(context);
    headers[id] = Object.keys(response.headers);
    if (lazy[id]) await setups[id].application.close();
  }
  for (const [id, { application }] of Object.entries(setups))
    if (!lazy[id] && id !== 'route-adaptive') await application.close();
  process.stdout.write(
    JSON.stringify({
      calls,
      repetitions,
      clients: CLIENTS,
      randomOrderSeed: runSeed(),
      clock: 'process CPU time (user + system) per call',
      samples,
      wallSamples,
      headers,
      deniedAnswers,
    }) + '\n',
  );
}

await main();
process.exit(0);
