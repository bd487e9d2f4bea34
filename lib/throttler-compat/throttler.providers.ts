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
    if (Array.isArray(options)) return new ThrottlerStorageService();
    const { storage, clock } = options;
    if (storage === undefined) return new ThrottlerStorageService(undefined, clock);
    return isRateLimitStore(storage) ? new ThrottlerStorageService(storage, clock) : storage;
  },
  inject: [THROTTLER_OPTIONS],
};

export const getOptionsToken = (): string => THROTTLER_OPTIONS;
export const getStorageToken = (): symbol => ThrottlerStorage;
