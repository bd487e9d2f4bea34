import type { ExecutionContext, ModuleMetadata, Type } from '@nestjs/common';
import type { RateLimitClock } from '../clock.js';
import type { RateLimitStore } from '../store/rate-limit-store.interface.js';
import type { ThrottlerStorage, ThrottlerStorageRecord } from './throttler-storage.interface.js';

/** A value, or a function of the call giving it (`@nestjs/throttler`'s `Resolvable`). */
export type Resolvable<T extends number | string | boolean> =
  T | ((context: ExecutionContext) => T | Promise<T>);

// Signatures as `@nestjs/throttler` declares them (a request is any object).
/* eslint-disable @typescript-eslint/no-explicit-any */
export type ThrottlerGetTrackerFunction = (
  req: Record<string, any>,
  context: ExecutionContext,
) => Promise<string> | string;
/* eslint-enable @typescript-eslint/no-explicit-any */

export type ThrottlerGenerateKeyFunction = (
  context: ExecutionContext,
  trackerString: string,
  throttlerName: string,
) => string;

/** One named throttler: at most `limit` hits per `ttl` milliseconds. */
export interface ThrottlerOptions {
  /** @default 'default' */
  name?: string;
  limit: Resolvable<number>;
  /** Window length in milliseconds, starting at a key's first hit. */
  ttl: Resolvable<number>;
  /** How long a key is denied once over the limit (ms). @default ttl */
  blockDuration?: Resolvable<number>;
  ignoreUserAgents?: RegExp[];
  skipIf?: (context: ExecutionContext) => boolean;
  getTracker?: ThrottlerGetTrackerFunction;
  generateKey?: ThrottlerGenerateKeyFunction;
  setHeaders?: boolean;
}

/** What the guard's exception hooks receive. */
export interface ThrottlerLimitDetail extends ThrottlerStorageRecord {
  ttl: number;
  limit: number;
  key: string;
  tracker: string;
}

export type ThrottlerModuleOptions =
  | ThrottlerOptions[]
  | {
      ignoreUserAgents?: RegExp[];
      skipIf?: (context: ExecutionContext) => boolean;
      getTracker?: ThrottlerGetTrackerFunction;
      generateKey?: ThrottlerGenerateKeyFunction;
      errorMessage?:
        | string
        | ((context: ExecutionContext, throttlerLimitDetail: ThrottlerLimitDetail) => string);
      /**
       * A `ThrottlerStorage` (used as it is), or one of this library's
       * in-process stores (a `MemoryStore` with options), run by the default
       * `ThrottlerStorageService`. Other `RateLimitStore`s are refused at
       * start-up (see docs/migrating-from-throttler.md).
       */
      storage?: ThrottlerStorage | RateLimitStore;
      ipv6SubnetPrefix?: number;
      throttlers: ThrottlerOptions[];
      /**
       * Not in `@nestjs/throttler`: the clock the default storage reads
       * (`ManualClock` in tests, to move time instead of sleeping).
       * @default systemClock
       */
      clock?: RateLimitClock;
      setHeaders?: boolean;
    };

export interface ThrottlerOptionsFactory {
  createThrottlerOptions(): Promise<ThrottlerModuleOptions> | ThrottlerModuleOptions;
}

export interface ThrottlerAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useExisting?: Type<ThrottlerOptionsFactory>;
  useClass?: Type<ThrottlerOptionsFactory>;
  useFactory?: (...args: any[]) => Promise<ThrottlerModuleOptions> | ThrottlerModuleOptions; // eslint-disable-line @typescript-eslint/no-explicit-any
  inject?: any[]; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** What `handleRequest` receives, per throttler. */
export interface ThrottlerRequest {
  context: ExecutionContext;
  limit: number;
  ttl: number;
  throttler: ThrottlerOptions;
  blockDuration: number;
  getTracker: ThrottlerGetTrackerFunction;
  generateKey: ThrottlerGenerateKeyFunction;
}
