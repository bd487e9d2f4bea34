// One process of slot-kill-faults.e2e-spec.ts: a Nest application (Express) on the
// built package, whose route holds a concurrency slot (2 per API key, on a
// RedisStore shared with the parent) in a handler that never ends. The
// parent SIGKILLs it while it holds them. Plain JavaScript against the built
// package (`npm test` builds first): decorators are applied by hand.
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Redis } from 'ioredis';
import { RateLimit, RateLimitModule } from '../../dist/esm/lib/index.js';
import { RedisStore } from '../../dist/esm/adapters/redis/index.js';

const { REDIS_URL, KEY_PREFIX, LEASE_MS } = process.env;

class HoldController {
  async hold() {
    process.send({ type: 'entered' });
    return new Promise(() => undefined); // never ends: the slot is held until the process dies
  }
}
const descriptor = Object.getOwnPropertyDescriptor(HoldController.prototype, 'hold');
const decorated = Reflect.decorate(
  [
    Get(),
    RateLimit({
      name: 'held',
      concurrency: 2,
      key: 'header:x-api-key',
      scope: 'shared',
      leaseTimeout: Number(LEASE_MS),
    }),
  ],
  HoldController.prototype,
  'hold',
  descriptor,
);
Object.defineProperty(HoldController.prototype, 'hold', decorated ?? descriptor);
Reflect.decorate([Controller('hold')], HoldController);

const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
await client.connect();
const store = new RedisStore({ client, keyPrefix: KEY_PREFIX, timeoutMs: 5_000 });
class AppModule {}
Reflect.decorate(
  [Module({ imports: [RateLimitModule.forRoot({ store })], controllers: [HoldController] })],
  AppModule,
);
const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: false });
await app.listen(0, '127.0.0.1');
process.send({ type: 'ready', port: app.getHttpServer().address().port });
