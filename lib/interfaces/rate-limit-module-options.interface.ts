import type { RateLimitClock } from '../clock.js';
import type { RateLimitStore } from '../store/rate-limit-store.interface.js';
import type { FailMode, RateLimitOptions, SkipPredicate } from './rate-limit-options.interface.js';
import type { HotKeysOptions } from './hot-keys-options.interface.js';
import type { RateLimitMetricsOptions } from './metrics-options.interface.js';
import type { RateLimitEventsOptions } from './events-options.interface.js';

/**
 * Which rate-limit headers to write (see docs/headers.md for every field).
 * - `'draft'`: IETF draft-ietf-httpapi-ratelimit-headers-11, `RateLimit-Policy`
 *   and `RateLimit`, one member per limit.
 * - `'draft-7'`: `RateLimit-Policy` and `RateLimit: limit=…, remaining=…, reset=…`
 *   (draft -07, as express-rate-limit writes it).
 * - `'draft-6'`: `RateLimit-Policy`, `RateLimit-Limit`, `RateLimit-Remaining`,
 *   `RateLimit-Reset` (draft -06, as express-rate-limit writes it).
 * - `'legacy'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`.
 * - `'both'`: `'draft'` and `'legacy'`; `false`: none.
 *
 * The single-limit formats report the most restrictive limit. `Retry-After`
 * is always sent on a 429.
 */
export type HeadersMode = 'draft' | 'draft-7' | 'draft-6' | 'legacy' | 'both' | false;

/**
 * The body of a 429 (and its `Content-Type`).
 * - `'nest'`: Nest's JSON error shape, `{ statusCode: 429, message, retryAfter }`.
 * - `'problem+json'`: RFC 9457 `application/problem+json` with the IETF
 *   draft's quota-exceeded problem type: `{ type, title, status, detail,
 *   'violated-policies', retryAfter }`.
 */
export type ErrorFormat = 'nest' | 'problem+json';

/**
 * Which proxies may set `X-Forwarded-For`, overriding the HTTP platform's own
 * setting. When not set, the client address is what the platform resolved
 * (Express `req.ip` with `app.set('trust proxy', …)`, Fastify `request.ip`
 * with its `trustProxy`).
 * - `false`: none; the socket address is the client.
 * - `true`: all; the left-most forwarded address is the client.
 * - a number `n`: the last `n` hops are trusted proxies.
 * - a list of addresses / CIDRs (`'10.0.0.0/8'`, `'::1'`): the client is the
 *   right-most address not in the list.
 */
export type TrustProxy = boolean | number | readonly string[];

/**
 * Options of `RateLimitModule.forRoot()` / `forRootAsync()`.
 *
 * @publicApi
 */
export interface RateLimitModuleOptions {
  /** @default new MemoryStore() */
  readonly store?: RateLimitStore;
  /**
   * Applied to routes that carry no `@RateLimit()`. Its `key` is also the
   * default key of every limit. When omitted, undecorated routes are not limited.
   */
  readonly defaults?: RateLimitOptions;
  /** Applied to every route, on top of route limits (a route limit of the same name replaces it). */
  readonly limits?: readonly RateLimitOptions[];
  /** @default 'draft' */
  readonly headers?: HeadersMode;
  /** The body of a 429. @default 'nest' */
  readonly errorFormat?: ErrorFormat;
  /** @default 'open' */
  readonly failMode?: FailMode;
  /**
   * Overrides the HTTP platform's trust-proxy setting for the rate limiter.
   * When the platform trusts proxies too (Express `app.set('trust proxy', …)`,
   * Fastify `trustProxy`) and says otherwise, a warning names both at
   * start-up: the limiter would see another client than `req.ip`. A platform
   * left at its default (trusting nothing) is not warned about.
   * @default not set: the HTTP platform's own trust-proxy setting (`req.ip`)
   */
  readonly trustProxy?: TrustProxy;
  /**
   * How many leading bits of an IPv6 address are one client: every address
   * key (`'ip'`, a header or key function whose value is an address,
   * `clientAddress()`) groups IPv6 addresses by this prefix.
   * @default 64
   */
  readonly ipv6Subnet?: number;
  /**
   * When it answers `true` (synchronously or not), no limit applies to the
   * call: nothing charged, no headers (e.g. internal health checks, a list of
   * partner API keys). One that throws or rejects does not skip, and says so once.
   */
  readonly skip?: SkipPredicate;
  /**
   * Client addresses and CIDRs no limit applies to (`'10.0.0.0/8'`, `'::1'`),
   * the client address resolved as for the `'ip'` key (`trustProxy` included).
   */
  readonly allowList?: readonly string[];
  /** Every limit in shadow mode (decided, counted, never denying), unless it says `shadow: false`. @default false */
  readonly shadow?: boolean;
  /** Milliseconds; for tests and simulations. @default Date.now */
  readonly clock?: RateLimitClock;
  /**
   * Export the limiter's metrics through OpenTelemetry and/or prom-client
   * (README "Observability"). @default none: nothing is measured
   */
  readonly metrics?: RateLimitMetricsOptions;
  /**
   * Where `RateLimitEvents` also delivers its events (docs/events-and-health.md).
   * `{ eventEmitter: true }`: to `@nestjs/event-emitter`'s `EventEmitter2` as
   * `rate-limit.denied`, `rate-limit.store-failure`, ... (the application
   * must import `EventEmitterModule.forRoot()`). @default none
   */
  readonly events?: RateLimitEventsOptions;
  /**
   * Keep a fixed-size summary of the callers each limit denies most, read
   * with `RateLimiter.hottestKeys()` (and, with `log`, said in the log).
   * Off by default: it holds caller identities.
   */
  readonly hotKeys?: boolean | HotKeysOptions;
}

/**
 * A class for `RateLimitModule.forRootAsync({ useClass })` / `useExisting`.
 *
 * @publicApi
 */
export interface RateLimitOptionsFactory {
  createRateLimitOptions(): RateLimitModuleOptions | Promise<RateLimitModuleOptions>;
}
