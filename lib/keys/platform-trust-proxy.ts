import type { TrustProxy } from '../interfaces/rate-limit-module-options.interface.js';
import { canonicalIp } from './ip-address.js';

/** The HTTP platform's own trust-proxy setting, as the application gave it. */
export interface PlatformTrustProxy {
  /** Names the setting in a message: `Express app.set('trust proxy')`, `Fastify { trustProxy }`. */
  readonly setting: string;
  readonly value: unknown;
}

/** The part of Nest's `HttpServer` read here. */
interface HttpAdapterLike {
  getType?(): string;
  getInstance?(): unknown;
}

/**
 * The platform's trust-proxy setting, or `undefined` when it cannot be read
 * (no HTTP adapter, another platform). Express keeps it as the `'trust proxy'`
 * setting; Fastify keeps its constructor options under a symbol of its own
 * (`fastify.options`), and nowhere public.
 */
export function readPlatformTrustProxy(adapter: unknown): PlatformTrustProxy | undefined {
  const http = adapter as HttpAdapterLike | undefined;
  const type = typeof http?.getType === 'function' ? http.getType() : undefined;
  const instance = typeof http?.getInstance === 'function' ? http.getInstance() : undefined;
  if (instance === null || (typeof instance !== 'object' && typeof instance !== 'function'))
    return undefined;
  if (type === 'express') {
    const get = (instance as { get?: (name: string) => unknown }).get;
    if (typeof get !== 'function') return undefined;
    return { setting: "Express app.set('trust proxy')", value: get.call(instance, 'trust proxy') };
  }
  if (type === 'fastify') {
    const symbol = Object.getOwnPropertySymbols(instance).find(
      (candidate) => candidate.description === 'fastify.options',
    );
    if (symbol === undefined) return undefined;
    const options = (instance as Record<symbol, { trustProxy?: unknown } | undefined>)[symbol];
    return { setting: 'Fastify { trustProxy }', value: options?.trustProxy };
  }
  return undefined;
}

/** What a trust-proxy setting means, comparable across the module and the platforms. */
type Trust =
  | { readonly kind: 'none' }
  | { readonly kind: 'all' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'list'; readonly entries: string }
  | { readonly kind: 'unknown' };

/** proxy-addr's named ranges (Express and Fastify both take them). */
const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

function trustOf(value: unknown): Trust {
  if (value === undefined || value === null || value === false || value === 0 || value === '')
    return { kind: 'none' };
  if (value === true) return { kind: 'all' };
  if (typeof value === 'number')
    return Number.isInteger(value) && value > 0
      ? { kind: 'hops', hops: value }
      : { kind: 'unknown' };
  const entries =
    typeof value === 'string'
      ? value.split(',')
      : Array.isArray(value) && value.every((entry) => typeof entry === 'string')
        ? (value as string[])
        : undefined;
  if (entries === undefined) return { kind: 'unknown' }; // a function: nothing to compare
  const canonical = new Set<string>();
  for (const raw of entries.flatMap((entry) => NAMED_RANGES[entry.trim()] ?? [entry.trim()])) {
    const [address = '', prefix] = raw.split('/');
    const ip = canonicalIp(address);
    if (ip === undefined) return { kind: 'unknown' };
    const bits = prefix === undefined ? (ip.family === 4 ? 32 : 128) : Number(prefix);
    canonical.add(`${ip.family === 4 ? ipv4Network(ip.address, bits) : ip.address}/${bits}`);
  }
  return { kind: 'list', entries: [...canonical].sort().join(',') };
}

/** An IPv4 CIDR's network address (`127.0.0.1/8` is `127.0.0.0/8`), so that both spellings compare equal. */
function ipv4Network(address: string, bits: number): string {
  if (!Number.isInteger(bits) || bits < 0 || bits > 32) return address;
  const value = address.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
  const network = bits === 0 ? 0 : value - (value % 2 ** (32 - bits));
  return [24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join('.');
}

function sameTrust(a: Trust, b: Trust): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'hops') return a.hops === (b as typeof a).hops;
  if (a.kind === 'list') return a.entries === (b as typeof a).entries;
  return true;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(show).join(', ')}]`;
  return String(value);
}

/**
 * The warning for a module `trustProxy` that says otherwise than the
 * platform's own setting, or `undefined` when they agree, when the module's
 * is not set (the platform's applies), when the platform's is left at its
 * default of trusting nothing (the module's is then how proxies are
 * configured for the limiter), or when the platform's is a function (nothing
 * to compare).
 */
export function trustProxyConflict(
  moduleTrustProxy: TrustProxy | undefined,
  platform: PlatformTrustProxy | undefined,
): string | undefined {
  if (moduleTrustProxy === undefined || platform === undefined) return undefined;
  const theirs = trustOf(platform.value);
  if (theirs.kind === 'none' || theirs.kind === 'unknown') return undefined;
  const ours = trustOf(moduleTrustProxy);
  if (ours.kind === 'unknown' || sameTrust(ours, theirs)) return undefined;
  return (
    `RateLimitModule: trustProxy is ${show(moduleTrustProxy)} but the platform's own setting, ${platform.setting}, is ${show(platform.value)}. ` +
    "The rate limiter finds client addresses with its own (the 'ip' key, allowList, clientAddress()), so it may limit another " +
    "address than the one req.ip, your logs and other middleware see. Make the two agree, or leave the module's trustProxy " +
    "unset to use the platform's. (Said once, at start-up.)"
  );
}
