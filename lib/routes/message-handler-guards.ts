import { GUARDS_METADATA } from '@nestjs/common/constants.js';
import { Injectable, type CanActivate, type OnModuleDestroy } from '@nestjs/common';
import { RateLimitGuard } from '../rate-limit.guard.js';
import { boundGuards } from './after-route-guards.js';
import { RateLimitRoutes } from './rate-limit-routes.js';

/**
 * Binds the module's guard to every rate-limited `@MessagePattern` /
 * `@EventPattern` handler, when the module is global.
 *
 * Why: a hybrid application's microservice (`app.connectMicroservice(...)`)
 * gets a fresh configuration unless `inheritAppConfig: true`, so the
 * module's `APP_GUARD` does not run for its handlers and their limits would
 * silently not apply. Bound on the handler, the guard runs either way; where
 * the `APP_GUARD` runs too (`inheritAppConfig: true`, a standalone
 * microservice), the call is still evaluated once, since every guard of a
 * call shares its execution context.
 *
 * Bound while providers are instantiated (Nest reads a handler's guards when
 * the microservice registers its handlers), and unbound when the module is
 * destroyed: handler functions are shared by every application in the
 * process.
 *
 * @internal
 */
@Injectable()
export class RateLimitMessageHandlerGuards implements OnModuleDestroy {
  private readonly bound: object[] = [];

  constructor(
    routes: RateLimitRoutes,
    private readonly guard: RateLimitGuard,
  ) {
    for (const handler of routes.limitedMessageHandlers()) {
      const guards = boundGuards(handler);
      if (guards.includes(guard)) continue;
      Reflect.defineMetadata(GUARDS_METADATA, [...guards, guard], handler);
      this.bound.push(handler);
    }
  }

  onModuleDestroy(): void {
    for (const handler of this.bound.splice(0)) {
      const guards = boundGuards(handler).filter((bound) => bound !== (this.guard as CanActivate));
      Reflect.defineMetadata(GUARDS_METADATA, guards, handler);
    }
  }
}
