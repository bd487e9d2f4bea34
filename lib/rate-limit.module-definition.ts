import { ConfigurableModuleBuilder } from '@nestjs/common';
import { optionError } from './errors/option-error.js';
import { optionNames, rejectUnknownOptions } from './errors/unknown-options.js';
import type { RateLimitModuleOptions } from './interfaces/rate-limit-module-options.interface.js';

/**
 * `forRoot` / `forRootAsync`, generated. The extra `global` option (default
 * `true`) registers `RateLimitGuard` as an `APP_GUARD`; with `global: false`
 * bind `RateLimitGuard` (and, where needed, `RateLimitInterceptor`) yourself.
 */
export const {
  ConfigurableModuleClass: ConfigurableRateLimitModule,
  MODULE_OPTIONS_TOKEN: RATE_LIMIT_MODULE_OPTIONS,
  OPTIONS_TYPE: RATE_LIMIT_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: RATE_LIMIT_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<RateLimitModuleOptions>({ moduleName: 'RateLimit' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createRateLimitOptions')
  .setExtras({ global: true }, (definition) => definition)
  .build();

/**
 * The names `forRootAsync()` takes: Nest's async options and the `global` extra.
 */
const ASYNC_OPTIONS = optionNames<typeof RATE_LIMIT_ASYNC_OPTIONS_TYPE>({
  imports: true,
  useExisting: true,
  useClass: true,
  useFactory: true,
  inject: true,
  provideInjectionTokensFrom: true,
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
