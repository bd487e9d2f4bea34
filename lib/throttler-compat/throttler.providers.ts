import type { Provider } from '@nestjs/common';
import { compatOptions } from './compat-options.js';
import { ThrottlerStorageService } from './throttler-storage.service.js';
import { ThrottlerStorage } from './throttler-storage.interface.js';
import { THROTTLER_OPTIONS } from './throttler.constants.js';
import type { ThrottlerModuleOptions } from './throttler-module-options.interface.js';

export function createThrottlerProviders(options: ThrottlerModuleOptions): Provider[] {
  return [{ provide: THROTTLER_OPTIONS, useValue: options }];
}

/**
 * The storage: a `ThrottlerStorage` given in `storage` as it is; else a
 * `ThrottlerStorageService` on the store given there (any `RateLimitStore`),
 * or on a `MemoryStore`. The module's options are checked here, at start-up
 * (`compatOptions`): a bad value fails the bootstrap, naming the option.
 */
export const ThrottlerStorageProvider: Provider = {
  provide: ThrottlerStorage,
  useFactory: (options: ThrottlerModuleOptions) => {
    const { store, storage, failMode } = compatOptions(options);
    if (storage !== undefined) return storage;
    const clock = Array.isArray(options) ? undefined : options.clock;
    return new ThrottlerStorageService(store, clock, failMode);
  },
  inject: [THROTTLER_OPTIONS],
};

export const getOptionsToken = (): string => THROTTLER_OPTIONS;
export const getStorageToken = (): symbol => ThrottlerStorage;
