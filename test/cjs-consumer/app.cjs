// A CommonJS consumer: plain require(), no TypeScript, no decorators syntax.
// Boots a Nest app on whatever @nestjs/* it finds next to it, limits one
// route to a burst of 2 and prints the status codes of three requests.
'use strict';
require('reflect-metadata');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { RateLimitModule, RateLimit } = require('nestjs-holdup');

class PingController {
  ping() {
    return { pong: true };
  }
}
const descriptor = Object.getOwnPropertyDescriptor(PingController.prototype, 'ping');
RateLimit({ rate: 1, burst: 2 })(PingController.prototype, 'ping', descriptor);
Get()(PingController.prototype, 'ping', descriptor);
Controller('ping')(PingController);

class AppModule {}
Module({ imports: [RateLimitModule.forRoot()], controllers: [PingController] })(AppModule);

(async () => {
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/ping`);
    statuses.push({ status: res.status, retryAfter: res.headers.get('retry-after'), policy: res.headers.get('ratelimit-policy') });
  }
  await app.close();
  process.stdout.write(JSON.stringify({ nest: require('@nestjs/core/package.json').version, statuses }) + '\n');
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
