import type { Provider } from '@nestjs/common';
import { isRateLimitStore, ThrottlerStorageService } from './throttler-storage.service.js';
import { ThrottlerStorage } from './throttler-storage.interface.js';
import { THROTTLER_OPTIONS } from './throttler.constants.js';
import type { ThrottlerModuleOptions } from './throttler-module-options.interface.js';

export function createThrottlerProviders(options: ThrottlerModuleOptions): Provider[] {
  return [{ provide: THROTTLER_OPTIONS, useValue: options }];
}

/**
 * The storage: the one given in `storage` (a `ThrottlerStorage` as it is, a
 * `RateLimitStore` under `ThrottlerStorageService`), else a
 * `ThrottlerStorageService` on a `MemoryStore`.
 */
export const ThrottlerStorageProvider: Provider = {
  provide: ThrottlerStorage,
  useFactory: (options: ThrottlerModuleOptions) => {
    const storage = Array.isArray(options) ? undefined : options.storage;
    if (storage === undefined) return new ThrottlerStorageService();
    return isRateLimitStore(storage) ? new ThrottlerStorageService(storage) : storage;
  },
  inject: [THROTTLER_OPTIONS],
};

export const getOptionsToken = (): string => THROTTLER_OPTIONS;
export const getStorageToken = (): symbol => ThrottlerStorage;
