import type { RateLimitDecision } from '../../lib/algorithms/gcra.js';
import type { HeaderLimit } from '../../lib/headers/rate-limit-headers.js';

/** Shorthands for the header formatters' specs: a limit and the decisions a store returns. */
export const limit = (name: string, rate: number, burst: number): HeaderLimit => ({
  name,
  rate,
  burst,
});

export const admitted = (remaining: number, resetMs: number): RateLimitDecision => ({
  allowed: true,
  remaining,
  retryAfterMs: 0,
  resetMs,
});

export const denied = (retryAfterMs: number, resetMs = 0, remaining = 0): RateLimitDecision => ({
  allowed: false,
  remaining,
  retryAfterMs,
  resetMs,
  reason: Number.isFinite(retryAfterMs) ? 'limit' : 'cost-exceeds-burst',
});
