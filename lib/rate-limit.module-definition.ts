import { ConfigurableModuleBuilder } from '@nestjs/common';
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
