import { RateLimitKeyError } from '../errors/rate-limit-key.error.js';
import type { ExecutionContext } from '@nestjs/common';
import type { KeyStrategy } from '../interfaces/rate-limit-options.interface.js';
import type { MaybePromise } from '../store/rate-limit-store.interface.js';
import { isPromiseLike } from '../util/maybe-promise.js';
import { boundedIdentity } from './bounded-key.js';
import { stashClientAddress } from './client-address-helper.js';
import { connectionIdentity } from './connection-identity.js';
import { addressIdentity } from './ip-address.js';
import type { AddressedRequest, RequestAddress } from '../interfaces/request-address.interface.js';

/** The bits of a request the built-in key strategies read (Express and Fastify both have them). */
export interface RequestLike extends AddressedRequest {
  readonly user?: { readonly id?: unknown; readonly sub?: unknown } | null;
}

/**
 * Turns a request into the caller part of a bucket key (already bounded).
 * A value, or a promise when the key function answered with one.
 */
export type Identify = (
  context: ExecutionContext,
  request: RequestLike | undefined,
) => MaybePromise<string>;

/** What compiling a key strategy needs from the module and the place it is declared. */
export interface KeyEnvironment {
  /** The client address as the module sees it (trust proxy applied, IPv6 grouped). */
  readonly address: RequestAddress;
  /** Prefix length grouping IPv6 addresses, applied to keys that are addresses too. */
  readonly ipv6Subnet: number;
  /** The handler and limit, for the errors a key function's answer can cause. */
  readonly where: string;
  /** Called when a `'user'` key found no user and fell back to the address (the caller says it once). */
  readonly onUserFallback: () => void;
  /** Called with the message of a call that could not be keyed, before it is refused (the caller says it once). */
  readonly onKeyError?: (message: string) => void;
}

/**
 * The identity part of a bucket key for a value chosen by application code
 * (a key function, `RateLimiter`): an IP address is grouped like the client
 * address, but keeps the `k` marker, so that it never reaches the bucket the
 * `'ip'` key gives the client at that address.
 */
export function customIdentity(value: string | number, ipv6Subnet: number): string {
  if (typeof value === 'number') return `k${boundedIdentity(String(value))}`;
  return `k${boundedIdentity(addressIdentity(value, ipv6Subnet) ?? value)}`;
}

/**
 * Compile a key strategy once, at start-up. Every strategy that cannot find
 * its identity (no user, no header, a key function answering nothing) falls
 * back to the client address, never to a shared `"undefined"` bucket; a key
 * that is itself an IP address is grouped like the client address.
 *
 * @returns `undefined` when the strategy is not recognised (the caller reports it).
 */
export function compileKeyStrategy(
  strategy: KeyStrategy,
  env: KeyEnvironment,
): Identify | undefined {
  const byAddress = (request: RequestLike | undefined): string => {
    const address = env.address(request);
    // No address (a transport without peers, such as Redis pub/sub): an
    // error, never one bucket shared by every caller.
    if (address === undefined) throw keyError(env, noAddressMessage(env.where));
    // Unmarked: every other identity starts with a letter and a marker (`u=`,
    // `h#`, `c=`...) or is `global`, none of which is an address. And it is
    // the request's own string for a socket's IPv4 address, whose hash V8
    // keeps: the memory store's lookup then hashes nothing.
    return address;
  };
  if (typeof strategy === 'function') return keyFunction(strategy, env, byAddress);
  if (strategy === 'ip') return (_context, request) => byAddress(request);
  if (strategy === 'global') return () => 'global';
  if (strategy === 'connection') {
    return (_context, request) => {
      const connection = connectionIdentity(request);
      if (connection === undefined) throw keyError(env, noConnectionMessage(env.where));
      return connection;
    };
  }
  if (strategy === 'user') {
    return (_context, request) => {
      const user = request?.user;
      const id = user?.id ?? user?.sub;
      if (id !== undefined && id !== null && id !== '') return `u${boundedIdentity(String(id))}`;
      env.onUserFallback();
      return byAddress(request);
    };
  }
  if (
    typeof strategy === 'string' &&
    strategy.startsWith('header:') &&
    strategy.length > 'header:'.length
  ) {
    const header = strategy.slice('header:'.length).toLowerCase();
    return (_context, request) => {
      const raw = request?.headers?.[header];
      const value = Array.isArray(raw) ? raw[0] : raw;
      if (value === undefined || value === '') return byAddress(request);
      // An address is grouped, but keeps the header's marker: a caller sending
      // another client's address must not reach that client's address bucket.
      return `h${boundedIdentity(addressIdentity(value, env.ipv6Subnet) ?? value)}`;
    };
  }
  return undefined;
}

/**
 * A key function, synchronous or not: its answer is checked (a value that
 * would put every caller in one bucket, such as an object, is an error, not
 * a key), and {@link clientAddress} works inside it.
 */
function keyFunction(
  strategy: (context: ExecutionContext) => unknown,
  env: KeyEnvironment,
  byAddress: (request: RequestLike | undefined) => string,
): Identify {
  const identity = (value: unknown, request: RequestLike | undefined): string => {
    if (value === undefined || value === null) return byAddress(request);
    if (typeof value === 'string')
      return value === '' ? byAddress(request) : customIdentity(value, env.ipv6Subnet);
    if (typeof value === 'number' && Number.isFinite(value))
      return customIdentity(value, env.ipv6Subnet);
    throw new TypeError(
      `RateLimit: ${env.where}: the key function returned ${describeAnswer(value)}; ` +
        'it must return a string or a number (undefined, null or an empty string fall back to the client address)',
    );
  };
  return (context, request) => {
    stashClientAddress(context, env.address, request);
    const value = strategy(context);
    if (!isPromiseLike(value)) return identity(value, request);
    return Promise.resolve(value).then((resolved) => identity(resolved, request));
  };
}

function keyError(env: KeyEnvironment, message: string): RateLimitKeyError {
  env.onKeyError?.(message);
  return new RateLimitKeyError(message);
}

function noAddressMessage(where: string): string {
  return (
    `RateLimit: ${where}: this call has no client address to key by (its transport gives none, or the connection is gone); ` +
    "give the limit a key function (or 'header:<name>', 'user', 'connection') so that callers are told apart"
  );
}

function noConnectionMessage(where: string): string {
  return `RateLimit: ${where}: key 'connection' found no connection for this call; give the limit a key function`;
}

function describeAnswer(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
