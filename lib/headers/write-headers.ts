import type { HttpServer } from '@nestjs/common';
import type { RateLimitDecision } from '../algorithms/gcra.js';
import type { HeadersMode } from '../interfaces/rate-limit-module-options.interface.js';
import { legacyHeaders, policyHeader, rateLimitHeader, type HeaderLimit } from './rate-limit-headers.js';

/** What the headers of one response are made of. */
export interface HeaderSource {
  readonly limits: readonly HeaderLimit[];
  readonly decisions: readonly RateLimitDecision[];
  /** Precomputed `RateLimit-Policy`, when the quotas cannot change. */
  readonly policy: string | undefined;
}

/**
 * Write the rate-limit headers through Nest's HTTP adapter, so that Express
 * and Fastify (and any other adapter) behave the same.
 */
export function writeRateLimitHeaders(adapter: HttpServer, response: unknown, mode: HeadersMode, source: HeaderSource): void {
  if (mode === false) return;
  if (mode !== 'legacy') {
    adapter.setHeader(response, 'RateLimit-Policy', source.policy ?? policyHeader(source.limits));
    adapter.setHeader(response, 'RateLimit', rateLimitHeader(source.limits, source.decisions));
  }
  if (mode !== 'draft') {
    for (const [name, value] of legacyHeaders(source.limits, source.decisions)) adapter.setHeader(response, name, value);
  }
}
