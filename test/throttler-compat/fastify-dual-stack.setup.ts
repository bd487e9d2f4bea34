/**
 * Harness for @nestjs/throttler's own suite (not one of its files): Fastify's
 * `listen(port)` binds `localhost`, which on a host whose /etc/hosts names
 * only 127.0.0.1 (this project's CI machines) is IPv4 only, while Express's
 * binds `::`. Throttler's error-message spec expects the client address
 * `::1` on both, as on its own dual-stack CI. Here Fastify's default host is
 * `::`, as Express's is, so the specs run unchanged on either kind of host.
 */
import { FastifyAdapter } from '@nestjs/platform-fastify';

const listen = FastifyAdapter.prototype.listen as (...args: unknown[]) => unknown;
FastifyAdapter.prototype.listen = function listenDualStack(
  this: FastifyAdapter,
  ...args: unknown[]
) {
  const [port, callback] = args;
  // Nest's app.listen(port) calls listen(port, callback): no host was asked for.
  if (args.length === 2 && typeof callback === 'function')
    return listen.call(this, port, '::', callback);
  return listen.apply(this, args);
} as FastifyAdapter['listen'];
