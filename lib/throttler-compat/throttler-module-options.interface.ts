import type { ExecutionContext, ModuleMetadata, Type } from '@nestjs/common';
import type { RateLimitClock } from '../clock.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';
import type { RateLimitStore } from '../store/rate-limit-store.interface.js';
import type { ThrottlerStorage, ThrottlerStorageRecord } from './throttler-storage.interface.js';

/** The headers the compat guard writes (see `headers`). */
export type ThrottlerHeaders = 'throttler' | 'draft' | 'both';

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
       * A `ThrottlerStorage` (used as it is: the guard calls its
       * `increment`), or one of this library's stores (`MemoryStore`,
       * `RedisStore` standalone or Cluster, `TwoTierStore`), counted by
       * `ThrottlerStorageService` through the module's engine: throttler's
       * windows and blocks, `failMode`, the store metrics.
       * @default a ThrottlerStorageService on a MemoryStore
       */
      storage?: ThrottlerStorage | RateLimitStore;
      ipv6SubnetPrefix?: number;
      throttlers: ThrottlerOptions[];
      /**
       * Not in `@nestjs/throttler`: the clock the storage reads
       * (`ManualClock` in tests, to move time instead of sleeping).
       * @default systemClock
       */
      clock?: RateLimitClock;
      setHeaders?: boolean;
      /**
       * Not in `@nestjs/throttler`: which rate-limit headers the guard
       * writes. `'throttler'`: throttler's `X-RateLimit-*` (suffixed per
       * named throttler); `'draft'`: IETF draft -11's `RateLimit` and
       * `RateLimit-Policy`, one member per throttler; `'both'`.
       * `Retry-After` is written on every 429 either way; `setHeaders:
       * false` still writes none.
       * @default 'throttler'
       */
      headers?: ThrottlerHeaders;
      /**
       * Not in `@nestjs/throttler`: what a request gets when the store in
       * `storage` fails (a Redis outage): `'open'` admits, `'closed'`
       * answers 503, `'local'` decides on the store's local tier
       * (`TwoTierStore` only). The outage is logged once, not per request.
       * @default 'open'
       */
      failMode?: FailMode;
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
