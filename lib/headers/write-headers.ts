import type { HttpServer } from '@nestjs/common';
import type { RateLimitDecision } from '../algorithms/gcra.js';
import type { HeadersMode } from '../interfaces/rate-limit-module-options.interface.js';
import {
  policyHeader,
  rateLimitHeader,
  type HeaderLimit,
  type HeaderPair,
} from './rate-limit-headers.js';
import { HeaderName } from './header-names.js';
import { draft6Headers, draft7Headers, legacyHeaders } from './single-limit-headers.js';

/** What the headers of one response are made of. */
export interface HeaderSource {
  readonly limits: readonly HeaderLimit[];
  readonly decisions: readonly RateLimitDecision[];
  /** Precomputed draft -11 `RateLimit-Policy`, when the quotas cannot change. */
  readonly policy: string | undefined;
}

/** Every value `headers` accepts, for validation and its error message. */
export const HEADER_MODES: readonly HeadersMode[] = [
  'draft',
  'draft-7',
  'draft-6',
  'legacy',
  'both',
  false,
];

/**
 * Write the rate-limit headers through Nest's HTTP adapter, so that Express
 * and Fastify (and any other adapter) behave the same.
 */
export function writeRateLimitHeaders(
  adapter: HttpServer,
  response: unknown,
  mode: HeadersMode,
  source: HeaderSource,
): void {
  switch (mode) {
    case false:
      return;
    case 'draft':
    case 'both':
      adapter.setHeader(response, HeaderName.policy, source.policy ?? policyHeader(source.limits));
      adapter.setHeader(
        response,
        HeaderName.rateLimit,
        rateLimitHeader(source.limits, source.decisions),
      );
      if (mode === 'both')
        setAll(adapter, response, legacyHeaders(source.limits, source.decisions));
      return;
    case 'legacy':
      return setAll(adapter, response, legacyHeaders(source.limits, source.decisions));
    case 'draft-7':
      return setAll(adapter, response, draft7Headers(source.limits, source.decisions));
    case 'draft-6':
      return setAll(adapter, response, draft6Headers(source.limits, source.decisions));
  }
}

function setAll(adapter: HttpServer, response: unknown, pairs: readonly HeaderPair[]): void {
  for (const [name, value] of pairs) adapter.setHeader(response, name, value);
}
