import type { Provider } from '@nestjs/common';
import type { RateLimitOwner } from '../interfaces/rate-limit-owner.interface.js';
import { RATE_LIMIT_OWNER } from '../rate-limit.constants.js';
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
  useFactory: (options: ThrottlerModuleOptions, owner?: RateLimitOwner) => {
    const { store, storage, failMode } = compatOptions(options);
    if (storage !== undefined) return storage;
    const clock = Array.isArray(options) ? undefined : options.clock;
    return new ThrottlerStorageService(store, clock, failMode, owner);
  },
  // RateLimitModule's identity when it runs in the app too: its metrics then count compat routes.
  inject: [THROTTLER_OPTIONS, { token: RATE_LIMIT_OWNER, optional: true }],
};

export const getOptionsToken = (): string => THROTTLER_OPTIONS;
export const getStorageToken = (): symbol => ThrottlerStorage;
