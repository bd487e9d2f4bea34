import type { ExecutionContext } from '@nestjs/common';

/** What a key function may answer: `undefined`, `null` or `''` fall back to the client address. */
export type KeyFunctionResult = string | number | undefined | null;

/**
 * Who a bucket belongs to.
 * - `'ip'`: the client address (the platform's `req.ip`, or the module's
 *   `trustProxy` when set; IPv6 grouped by `ipv6Subnet`, /64 by default). For
 *   a WebSocket, the address of the connection's handshake request; for a TCP
 *   microservice, the peer's. A call with no address (a broker transport)
 *   is an error naming the limit, never a bucket shared by every caller.
 * - `'user'`: `req.user.id ?? req.user.sub`; falls back to `'ip'` when there is
 *   no user. On a route with its own guards (`@UseGuards(AuthGuard('jwt'))`),
 *   limits keyed by user are evaluated after those guards, once they have set `req.user`.
 * - `'header:<name>'`: the value of that request header; falls back to `'ip'` when absent.
 * - `'global'`: one bucket shared by every caller.
 * - `'connection'`: the connection the call arrived on (a WebSocket client, a
 *   TCP microservice peer, an HTTP keep-alive connection).
 * - a function of the `ExecutionContext`, returning the caller's identity or
 *   a promise of it (a session look-up); `undefined`, `null` or `''` falls
 *   back to `'ip'`, and any other non-string, non-number answer is an error.
 *   Use `clientAddress(context)` to combine the address with something else.
 *
 * A key (header or function) whose value is an IP address is grouped like the client address.
 */
export type KeyStrategy =
  | 'ip'
  | 'user'
  | 'global'
  | 'connection'
  | `header:${string}`
  | ((context: ExecutionContext) => KeyFunctionResult | Promise<KeyFunctionResult>);

/**
 * What to do when the store fails (throws, rejects, times out):
 * - `'open'` admits the request;
 * - `'closed'` answers 503;
 * - `'local'` lets a store with a local tier (`TwoTierStore`) decide from its
 *   local share of each limit while its shared backend is unreachable. Only
 *   accepted with such a store (see {@link RateLimitStore.localFallback});
 *   should the local tier fail too, the request is admitted as with `'open'`.
 *
 * When several limits apply to one request, the strictest wins:
 * `'closed'`, then `'local'`, then `'open'`.
 */
export type FailMode = 'open' | 'closed' | 'local';

/**
 * What every kind of limit takes: its name, whose bucket (or slots) a call
 * counts against, and what to do when the store fails.
 *
 * @publicApi
 */
export interface BaseLimitOptions {
  /**
   * Names the limit in headers and in `@SkipRateLimit('name')`; a method-level
   * limit replaces a class-level (or module-wide) one of the same name.
   * @default 'default'
   */
  readonly name?: string;
  /** @default the module `defaults.key`, else `'ip'` */
  readonly key?: KeyStrategy;
  /**
   * `'route'`: one bucket per route (per handler). `'shared'`: one bucket for
   * every route carrying a limit of this name.
   * @default 'route'
   */
  readonly scope?: 'route' | 'shared';
  /** Overrides the module's `failMode` for requests this limit applies to. */
  readonly failMode?: FailMode;
}
