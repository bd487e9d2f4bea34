/**
 * The names of the headers the module writes, in lowercase.
 *
 * Field names are case-insensitive (RFC 9110, section 5.1), and HTTP/2 and
 * HTTP/3 send them in lowercase whatever they were given. Fastify's
 * `reply.header` and Node's `setHeader` (Express) both key a header by
 * `name.toLowerCase()`, which makes a new string for a name with capitals
 * and hands back the same one for a name without: given in lowercase, every
 * header of every response skips that allocation and the lookup of the new
 * string in V8's string table. Measured in the guard micro-benchmark
 * (`bench/guard`, `holdup`, three rounds alternated with the mixed-case
 * names): 1,058-1,086 ns per call before, 869-915 after. Fastify sends them
 * in lowercase either way; over HTTP/1.1, Express now does too.
 */
export const HeaderName = {
  /** draft-ietf-httpapi-ratelimit-headers: the quotas (`'draft'`, and the numeric `'draft-6'`/`'draft-7'` form). */
  policy: 'ratelimit-policy',
  /** draft-ietf-httpapi-ratelimit-headers: what is left (`'draft'`, `'draft-7'`). */
  rateLimit: 'ratelimit',
  /** `'draft-6'`. */
  limit: 'ratelimit-limit',
  remaining: 'ratelimit-remaining',
  reset: 'ratelimit-reset',
  /** `'legacy'`. */
  legacyLimit: 'x-ratelimit-limit',
  legacyRemaining: 'x-ratelimit-remaining',
  legacyReset: 'x-ratelimit-reset',
  /** Of every denial a wait can help. */
  retryAfter: 'retry-after',
  contentType: 'content-type',
} as const;
