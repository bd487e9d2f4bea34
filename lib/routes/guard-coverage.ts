import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RESOLVED_RATE_LIMIT_OPTIONS } from '../rate-limit.constants.js';
import type { ResolvedModuleOptions } from '../interfaces/resolved-module-options.interface.js';
import { boundGuards, isRateLimitGuard } from './after-route-guards.js';
import { RateLimitRoutes } from './rate-limit-routes.js';

/** How many handlers the warning names before it says "and N more". */
const NAMED = 5;

/**
 * With `bindGlobally: false` the application binds the guard itself; a limited
 * route where it bound none is not limited at all. Checked once the
 * application has bootstrapped (global guards added with
 * `app.useGlobalGuards()` before `listen()`/`init()` count) and said once.
 *
 * @internal
 */
@Injectable()
export class RateLimitGuardCoverage implements OnApplicationBootstrap {
  constructor(
    private readonly routes: RateLimitRoutes,
    private readonly moduleRef: ModuleRef,
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  onApplicationBootstrap(): void {
    const global = globalGuards(this.moduleRef);
    if (global === undefined || global.some(isRateLimitGuard)) return;
    const unguarded: string[] = [];
    for (const { controller, handler, route } of this.routes.compiled()) {
      if (route.limits.length === 0 && route.concurrency.length === 0) continue;
      if (
        boundGuards(controller).some(isRateLimitGuard) ||
        boundGuards(handler).some(isRateLimitGuard)
      )
        continue;
      unguarded.push(`${controller.name}.${handler.name}`);
    }
    if (unguarded.length === 0) return;
    const named =
      unguarded.slice(0, NAMED).join(', ') +
      (unguarded.length > NAMED ? ` and ${unguarded.length - NAMED} more` : '');
    this.options.warn(
      `RateLimitModule: bindGlobally is false and no RateLimitGuard runs for ${unguarded.length} route(s) with limits: ${named}. ` +
        'They are not limited. Bind the guard: @UseGuards(RateLimitGuard) on the controllers, a global guard ' +
        '({ provide: APP_GUARD, useExisting: RateLimitGuard }), or import the module without bindGlobally: false.',
    );
  }
}

/**
 * The application's global guards (`APP_GUARD` providers and
 * `app.useGlobalGuards()`), from Nest's application config. Nest does not
 * expose it publicly; `undefined` when it cannot be read, and then nothing is
 * said rather than something wrong.
 */
function globalGuards(moduleRef: ModuleRef): readonly unknown[] | undefined {
  type Config = {
    getGlobalGuards?(): unknown[];
    getGlobalRequestGuards?(): { metatype?: unknown }[];
  };
  const config = (moduleRef as unknown as { container?: { applicationConfig?: Config } }).container
    ?.applicationConfig;
  if (typeof config?.getGlobalGuards !== 'function') return undefined;
  const requestScoped = config.getGlobalRequestGuards?.().map((wrapper) => wrapper.metatype) ?? [];
  return [...config.getGlobalGuards(), ...requestScoped];
}
