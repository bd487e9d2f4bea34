// A CommonJS consumer: plain require(), no TypeScript, no decorators syntax.
// Boots a Nest app on whatever @nestjs/* it finds next to it, limits one
// route to a burst of 2 and prints the status codes of three requests; and a
// route keyed by user behind its own auth guard (the limit must wait for it,
// whatever Nest version registers the routes), with a burst of 1 per user.
'use strict';
require('reflect-metadata');
const { Controller, Get, Module, UnauthorizedException, UseGuards } = require('@nestjs/common');
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

/** Passport's AuthGuard('jwt'), in short: `Authorization: Bearer <id>` sets req.user. */
class BearerGuard {
  canActivate(context) {
    const request = context.switchToHttp().getRequest();
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization || '');
    if (!bearer) throw new UnauthorizedException();
    request.user = { id: bearer[1] };
    return true;
  }
}
class MeController {
  me() {
    return { ok: true };
  }
}
const meDescriptor = Object.getOwnPropertyDescriptor(MeController.prototype, 'me');
Get()(MeController.prototype, 'me', meDescriptor);
RateLimit({ rate: '1/min', burst: 1, key: 'user' })(MeController);
UseGuards(BearerGuard)(MeController);
Controller('me')(MeController);

class AppModule {}
Module({ imports: [RateLimitModule.forRoot()], controllers: [PingController, MeController] })(
  AppModule,
);

(async () => {
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/ping`);
    statuses.push({
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      policy: res.headers.get('ratelimit-policy'),
    });
  }
  const users = [];
  for (const user of ['alice', 'alice', 'bob']) {
    const res = await fetch(`http://127.0.0.1:${port}/me`, {
      headers: { authorization: `Bearer ${user}` },
    });
    users.push(`${user}:${res.status}`);
  }
  await app.close();
  process.stdout.write(
    JSON.stringify({ nest: require('@nestjs/core/package.json').version, statuses, users }) + '\n',
  );
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
