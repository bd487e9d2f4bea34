import { ConfigurableModuleBuilder } from '@nestjs/common';
import { describeValue, optionError } from './errors/option-error.js';
import { optionNames, rejectUnknownOptions } from './errors/unknown-options.js';
import type { RateLimitModuleOptions } from './interfaces/rate-limit-module-options.interface.js';

/**
 * The options `forRoot()` and `forRootAsync()` take besides the module
 * options (Nest's "extras": they shape the module, they are not handed to it).
 *
 * @publicApi
 */
export interface RateLimitModuleExtras {
  /**
   * Bind `RateLimitGuard` app-wide (`APP_GUARD`), and `RateLimitInterceptor`
   * (`APP_INTERCEPTOR`) when module-wide limits need it. With `false`, bind
   * them yourself (for instance after your authentication guard). Not Nest's
   * `isGlobal`: the module's providers (`RateLimiter`...) are injectable
   * everywhere either way.
   * @default true
   */
  readonly bindGlobally?: boolean;
  /**
   * @deprecated since 0.2.0, removed in 0.3.0: use {@link bindGlobally} (the
   * same switch, renamed: `global` read like Nest's `isGlobal`, which it is
   * not). Still accepted, with a warning at start-up; not together with `bindGlobally`.
   */
  readonly global?: boolean;
}

/**
 * `forRoot` / `forRootAsync`, generated. The extra `bindGlobally` (default
 * `true`; deprecated name `global`) registers `RateLimitGuard` as an
 * `APP_GUARD`; with `bindGlobally: false` bind `RateLimitGuard` (and, where
 * needed, `RateLimitInterceptor`) yourself.
 */
export const {
  ConfigurableModuleClass: ConfigurableRateLimitModule,
  MODULE_OPTIONS_TOKEN: RATE_LIMIT_MODULE_OPTIONS,
  OPTIONS_TYPE: RATE_LIMIT_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: RATE_LIMIT_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<RateLimitModuleOptions>({ moduleName: 'RateLimit' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createRateLimitOptions')
  // Both keys listed (no default here: `complete()` applies it), so that Nest strips both from the options.
  .setExtras<RateLimitModuleExtras>(
    { bindGlobally: undefined, global: undefined },
    (definition) => definition,
  )
  .build();

/**
 * The names `forRootAsync()` takes: Nest's async options and the extras
 * (`bindGlobally`, and its deprecated name `global`).
 */
const ASYNC_OPTIONS = optionNames<typeof RATE_LIMIT_ASYNC_OPTIONS_TYPE>({
  imports: true,
  useExisting: true,
  useClass: true,
  useFactory: true,
  inject: true,
  provideInjectionTokensFrom: true,
  bindGlobally: true,
  global: true,
});

/**
 * Checks `forRootAsync()`'s own options when it is called. Nest takes any
 * other name as an extra and ignores it (`globl: false` would leave the guard
 * global), and without a factory it fails later with a dependency-injection
 * error about `RATE_LIMIT_MODULE_OPTIONS` that does not say `useFactroy` was misspelt.
 *
 * @internal
 */
export function checkAsyncOptions(options: typeof RATE_LIMIT_ASYNC_OPTIONS_TYPE): void {
  const where = 'RateLimitModule.forRootAsync';
  if (options === null || typeof options !== 'object')
    throw optionError(where, 'options', 'must be an object');
  rejectUnknownOptions(where, options, ASYNC_OPTIONS);
  if (
    options.useFactory === undefined &&
    options.useClass === undefined &&
    options.useExisting === undefined
  ) {
    throw optionError(where, 'options', 'must have useFactory, useClass or useExisting');
  }
}

/**
 * Whether the guard (and the interceptor) are bound app-wide: `bindGlobally`,
 * else the deprecated `global`, else `true`. Refuses both together and
 * anything but a boolean, naming `where` (`RateLimitModule.forRoot`).
 *
 * @internal
 */
export function bindsGlobally(extras: RateLimitModuleExtras, where: string): boolean {
  const { bindGlobally, global } = extras;
  if (bindGlobally !== undefined && global !== undefined)
    throw optionError(
      where,
      'global',
      'is the deprecated name of bindGlobally: give only bindGlobally',
    );
  const option = global === undefined ? 'bindGlobally' : 'global';
  const value = bindGlobally ?? global ?? true;
  if (typeof value !== 'boolean')
    throw optionError(where, option, `must be a boolean, got ${describeValue(value)}`);
  return value;
}
