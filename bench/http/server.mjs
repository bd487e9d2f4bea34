// One Nest 12 hello-world application, in its own process, for one variant on
// one platform:  node bench/http/server.mjs <express|fastify> <variant>
// Prints `READY <port>` on stdout once listening; exits on SIGTERM.
//
// Plain JavaScript (no TS loader): decorators are applied by hand with
// Reflect.decorate, which is what compiled TypeScript does.
import 'reflect-metadata';
import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { MemoryStore, RateLimit, RateLimitModule } from 'nestjs-holdup';
import { floorGuard } from '../lib/floor-guard.mjs';

// Never denies at the request rates reached here (~10-20k/s): we measure the
// decision, not 429s. Not 1e9/s: at that rate one token is 1e-6 ms, below the
// resolution of a double holding Date.now() (~2.4e-4 ms), so the bucket state
// would never move and the bench would not exercise a real bucket.
const RATE = 100_000;
const BURST = 100_000;
// @nestjs/throttler counts hits in a window; a limit it never reaches.
const NEVER = 1e9;

function decorateMethod(decorators, prototype, name) {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
  Object.defineProperty(
    prototype,
    name,
    Reflect.decorate(decorators, prototype, name, descriptor) ?? descriptor,
  );
}

/** Calibration: what Nest itself charges for having any global guard. */
class NoopGuard {
  canActivate() {
    return true;
  }
}
Reflect.decorate([Injectable()], NoopGuard);

const FloorGuard = floorGuard(RATE, BURST);
// The denied variants: one token per 1000 s, a burst of one: after its first
// request, every request of the (single) load-generating client is a 429.
const DENIED = { rate: 1e-3, burst: 1 };
const FloorDeniedGuard = floorGuard(DENIED.rate, DENIED.burst);

/** Calibration: what Nest itself charges for any global interceptor (the 0.83x / 0.72x). */
class NoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Reflect.decorate([Injectable()], NoopInterceptor);

async function imports(variant) {
  switch (variant) {
    case 'baseline':
      return { imports: [], providers: [], route: [] };
    case 'noop-guard':
      return { imports: [], providers: [{ provide: APP_GUARD, useClass: NoopGuard }], route: [] };
    case 'floor-guard':
      return { imports: [], providers: [{ provide: APP_GUARD, useClass: FloorGuard }], route: [] };
    case 'noop-interceptor':
      return {
        imports: [],
        providers: [{ provide: APP_INTERCEPTOR, useClass: NoopInterceptor }],
        route: [],
      };
    case 'holdup':
    case 'holdup-noheaders':
      return {
        imports: [
          RateLimitModule.forRoot({
            store: new MemoryStore(),
            defaults: { rate: RATE, burst: BURST, key: 'ip' },
            headers: variant === 'holdup' ? 'draft' : false,
          }),
        ],
        providers: [],
        route: [],
      };
    case 'floor-guard-denied':
      return {
        imports: [],
        providers: [{ provide: APP_GUARD, useClass: FloorDeniedGuard }],
        route: [],
      };
    case 'holdup-denied':
      return {
        imports: [
          RateLimitModule.forRoot({
            store: new MemoryStore(),
            defaults: { ...DENIED, key: 'ip' },
            headers: 'draft',
          }),
        ],
        providers: [],
        route: [],
      };
    case 'holdup-adaptive':
      return {
        imports: [RateLimitModule.forRoot({ store: new MemoryStore(), headers: 'draft' })],
        providers: [],
        // @RateLimit with `adaptive` binds RateLimitInterceptor to the route.
        route: [
          RateLimit({
            rate: RATE,
            burst: BURST,
            key: 'ip',
            adaptive: { min: RATE / 10, max: RATE },
          }),
        ],
      };
    case 'throttler': {
      const { ThrottlerGuard, ThrottlerModule } = await import('@nestjs/throttler');
      // A sliding log: each request filters the hits of the last `ttl`, so
      // with a limit never reached its cost grows with rate x ttl (see the
      // decision micro-benchmark). 1 s keeps the log to ~1 s of traffic.
      const ttl = 1_000;
      return {
        imports: [ThrottlerModule.forRoot([{ ttl, limit: NEVER }])],
        providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
        route: [],
      };
    }
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}

async function main() {
  const [platform, variant] = process.argv.slice(2);
  const setup = await imports(variant);

  class HelloController {
    hello() {
      return 'Hello World!';
    }
  }
  decorateMethod([Get(), ...setup.route], HelloController.prototype, 'hello');
  Reflect.decorate([Controller()], HelloController);

  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: setup.imports,
        controllers: [HelloController],
        providers: setup.providers,
      }),
    ],
    AppModule,
  );

  let app;
  if (platform === 'fastify') {
    const { FastifyAdapter } = await import('@nestjs/platform-fastify');
    app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false });
  } else if (platform === 'express') {
    app = await NestFactory.create(AppModule, { logger: false });
  } else {
    throw new Error(`unknown platform ${platform}`);
  }
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  // CPU time of this process, asked by the parent around the measured run:
  // CPU per request is far less sensitive than throughput to the other jobs
  // sharing the machine.
  process.on('message', (message) => {
    if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
  });
  process.stdout.write(`READY ${port}\n`);
  const stop = () => {
    app.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
