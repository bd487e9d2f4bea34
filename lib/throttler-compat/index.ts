// `nestjs-holdup/throttler-compat`: `@nestjs/throttler` 6's public names with
// its behaviour (headers, 429 message, windows anchored at the first hit,
// blockDuration), counted by this library's window algorithm and store.
// Change the import lines of an app written for throttler; then move it to
// `@RateLimit()` one controller at a time (docs/migrating-from-throttler.md).
export { ThrottlerModule } from './throttler.module.js';
export { ThrottlerGuard } from './throttler.guard.js';
export {
  Throttle,
  SkipThrottle,
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  type ThrottlerMethodOrControllerOptions,
} from './throttler.decorator.js';
export { ThrottlerException, throttlerMessage } from './throttler.exception.js';
export { ThrottlerStorage, type ThrottlerStorageRecord } from './throttler-storage.interface.js';
export { ThrottlerStorageService } from './throttler-storage.service.js';
export { getOptionsToken, getStorageToken } from './throttler.providers.js';
export { THROTTLER_OPTIONS } from './throttler.constants.js';
export { seconds, minutes, hours, days, weeks } from './utilities.js';
export { normalizeIp, DEFAULT_IPV6_SUBNET_PREFIX } from './ip.js';
export type {
  Resolvable,
  ThrottlerOptions,
  ThrottlerModuleOptions,
  ThrottlerAsyncOptions,
  ThrottlerOptionsFactory,
  ThrottlerGetTrackerFunction,
  ThrottlerGenerateKeyFunction,
  ThrottlerLimitDetail,
  ThrottlerRequest,
} from './throttler-module-options.interface.js';
