import type { ExecutionContext } from '@nestjs/common';
import type { KeyStrategy } from '../interfaces/rate-limit-options.interface.js';
import type { ClientAddressResolver } from './client-address.js';
import { boundedIdentity } from './bounded-key.js';
import { ipIdentity } from './ip-address.js';

/** The bits of a request the built-in key strategies read (Express and Fastify both have them). */
export interface RequestLike {
  readonly headers?: Record<string, string | string[] | undefined>;
  readonly socket?: { readonly remoteAddress?: string };
  readonly raw?: { readonly socket?: { readonly remoteAddress?: string } };
  readonly user?: { readonly id?: unknown; readonly sub?: unknown } | null;
}

/** Turns a request into the caller part of a bucket key (already bounded). */
export type Identify = (context: ExecutionContext, request: RequestLike | undefined) => string;

/** The identity part of a bucket key for a value chosen by application code (a key function, `RateLimiter`). */
export function customIdentity(value: string | number): string {
  return `k${boundedIdentity(String(value))}`;
}

/**
 * Compile a key strategy once, at start-up. Every strategy that cannot find
 * its identity (no user, no header, a key function returning nothing) falls
 * back to the client address, never to a shared `"undefined"` bucket.
 *
 * @returns `undefined` when the strategy is not recognised (the caller reports it).
 */
export function compileKeyStrategy(strategy: KeyStrategy, clientAddress: ClientAddressResolver): Identify | undefined {
  const byIp: Identify = (_context, request) => ipKey(request, clientAddress);
  if (typeof strategy === 'function') {
    return (context, request) => {
      const value = strategy(context);
      return value === undefined || value === null || value === '' ? byIp(context, request) : customIdentity(value);
    };
  }
  if (strategy === 'ip') return byIp;
  if (strategy === 'global') return () => 'global';
  if (strategy === 'user') {
    return (context, request) => {
      const user = request?.user;
      const id = user?.id ?? user?.sub;
      return id === undefined || id === null || id === '' ? byIp(context, request) : `u${boundedIdentity(String(id))}`;
    };
  }
  if (typeof strategy === 'string' && strategy.startsWith('header:') && strategy.length > 'header:'.length) {
    const header = strategy.slice('header:'.length).toLowerCase();
    return (context, request) => {
      const raw = request?.headers?.[header];
      const value = Array.isArray(raw) ? raw[0] : raw;
      return value === undefined || value === '' ? byIp(context, request) : `h${boundedIdentity(value)}`;
    };
  }
  return undefined;
}

function ipKey(request: RequestLike | undefined, clientAddress: ClientAddressResolver): string {
  const socket = request?.socket?.remoteAddress ?? request?.raw?.socket?.remoteAddress;
  const forwarded = request?.headers?.['x-forwarded-for'];
  const address = clientAddress(socket, Array.isArray(forwarded) ? forwarded.join(',') : forwarded);
  const identity = address === undefined ? undefined : ipIdentity(address);
  // No address at all (a non-HTTP context without a socket): one bucket for
  // all such callers, named so that it shows up for what it is.
  return identity === undefined ? 'ip=unknown' : `ip=${identity}`;
}
