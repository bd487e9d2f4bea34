// One of the processes of login-processes.e2e-spec.ts: a Nest application
// (Express) whose login route counts only failures, on a RedisStore shared
// with the other processes. Every request that reaches the handler is held
// there until the parent says "open", so that all requests are past the
// guard before any outcome exists. Plain JavaScript against the built
// package (`npm test` builds first): decorators are applied by hand.
import 'reflect-metadata';
import { Controller, Module, Post, UnauthorizedException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Redis } from 'ioredis';
import { RateLimit, RateLimitModule } from '../../dist/esm/lib/index.js';
import { RedisStore } from '../../dist/esm/adapters/redis/index.js';

const { REDIS_URL, KEY_PREFIX } = process.env;

let opened = false;
const waiting = [];
process.on('message', (message) => {
  if (message.type !== 'open') return;
  opened = true;
  for (const resolve of waiting.splice(0)) resolve();
});

class AuthController {
  async login() {
    process.send({ type: 'entered' });
    if (!opened) await new Promise((resolve) => waiting.push(resolve));
    throw new UnauthorizedException('wrong password');
  }
}
const descriptor = Object.getOwnPropertyDescriptor(AuthController.prototype, 'login');
const decorated = Reflect.decorate(
  // One account under attack from every process: its key is the account, not the caller.
  [
    Post('login'),
    RateLimit({
      name: 'login',
      rate: '5/15min',
      burst: 5,
      charge: 'failures',
      key: () => 'victim@example.com',
    }),
  ],
  AuthController.prototype,
  'login',
  descriptor,
);
Object.defineProperty(AuthController.prototype, 'login', decorated ?? descriptor);
Reflect.decorate([Controller('auth')], AuthController);

const client = new Redis(REDIS_URL, {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
});
await client.connect();
const store = new RedisStore({ client, keyPrefix: KEY_PREFIX, timeoutMs: 5_000 });
class AppModule {}
Reflect.decorate(
  [Module({ imports: [RateLimitModule.forRoot({ store })], controllers: [AuthController] })],
  AppModule,
);
const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: false });
await app.listen(0, '127.0.0.1');
process.send({ type: 'ready', port: app.getHttpServer().address().port });
process.once('disconnect', async () => {
  await app.close();
  client.disconnect();
});
