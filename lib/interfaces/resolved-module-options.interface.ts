import type { RateLimitClock } from '../clock.js';
import type { DeprecatedOptions } from '../util/deprecated-options.js';
import type { RateLimitStore } from '../store/rate-limit-store.interface.js';
import type { ResolvedEventsOptions } from './events-options.interface.js';
import type { ResolvedHotKeysOptions } from './hot-keys-options.interface.js';
import type { ResolvedMetricsOptions } from './metrics-options.interface.js';
import type {
  ErrorFormat,
  HeadersMode,
  TrustProxy,
} from './rate-limit-module-options.interface.js';
import type {
  FailMode,
  KeyStrategy,
  RateLimitOptions,
  SkipPredicate,
} from './rate-limit-options.interface.js';
import type { RateLimitOwner } from './rate-limit-owner.interface.js';
import type { AddressedRequest, RequestAddress } from './request-address.interface.js';

/**
 * Module options after validation, with defaults filled in.
 *
 * @internal
 */
export interface ResolvedModuleOptions {
  readonly store: RateLimitStore;
  readonly headers: HeadersMode;
  readonly errorFormat: ErrorFormat;
  readonly failMode: FailMode;
  readonly clock: RateLimitClock;
  /** The client address of a request as every address key sees it. */
  readonly address: RequestAddress;
  readonly ipv6Subnet: number;
  /** `trustProxy` is set (forwarded addresses count, where a transport can read them). */
  readonly trustsProxies: boolean;
  /** The module's `trustProxy` as given (`undefined`: the platform's applies), compared with the platform's at start-up. */
  readonly trustProxy: TrustProxy | undefined;
  /** What must be said once rather than per request goes here (Nest's logger, context `RateLimit`). */
  readonly warn: (message: string) => void;
  /** Deprecated option names in use: noted at start-up, said once each when the routes are compiled. */
  readonly deprecations: DeprecatedOptions;
  readonly defaultKey: KeyStrategy;
  readonly defaults: RateLimitOptions | undefined;
  readonly limits: readonly RateLimitOptions[];
  /** The module's `shadow`: the default of every limit's. */
  readonly shadow: boolean;
  /** The module's `skip`: no limit applies to a call it skips. */
  readonly skip: SkipPredicate | undefined;
  /** The module's `allowList`, as a test of the request: no limit applies to a client it holds. */
  readonly allowed: ((request: AddressedRequest | undefined) => boolean) | undefined;
  /** `undefined` when no exporter is configured. */
  readonly metrics: ResolvedMetricsOptions | undefined;
  readonly events: ResolvedEventsOptions;
  /** This module instance's identity: every channel message it publishes carries it. */
  readonly owner: RateLimitOwner;
  /** `undefined` unless `hotKeys` is enabled. */
  readonly hotKeys: ResolvedHotKeysOptions | undefined;
}
