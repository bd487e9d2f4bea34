import type { Provider } from '@nestjs/common';
import {
  RATE_LIMIT_CLOCK,
  RATE_LIMIT_OWNER,
  RATE_LIMIT_STORE,
  RESOLVED_RATE_LIMIT_OPTIONS,
} from './rate-limit.constants.js';
import { RATE_LIMIT_MODULE_OPTIONS } from './rate-limit.module-definition.js';
import { resolveModuleOptions } from './resolve-module-options.js';
import type { ResolvedModuleOptions } from './interfaces/resolved-module-options.interface.js';

/** Validates the options once; a bad option fails the bootstrap here. */
export const resolvedOptionsProvider: Provider = {
  provide: RESOLVED_RATE_LIMIT_OPTIONS,
  useFactory: resolveModuleOptions,
  inject: [RATE_LIMIT_MODULE_OPTIONS],
};

export const storeProvider: Provider = {
  provide: RATE_LIMIT_STORE,
  useFactory: (options: ResolvedModuleOptions) => options.store,
  inject: [RESOLVED_RATE_LIMIT_OPTIONS],
};

/** The module instance's identity, made with its options (one per application). */
export const ownerProvider: Provider = {
  provide: RATE_LIMIT_OWNER,
  useFactory: (options: ResolvedModuleOptions) => options.owner,
  inject: [RESOLVED_RATE_LIMIT_OPTIONS],
};

export const clockProvider: Provider = {
  provide: RATE_LIMIT_CLOCK,
  useFactory: (options: ResolvedModuleOptions) => options.clock,
  inject: [RESOLVED_RATE_LIMIT_OPTIONS],
};
