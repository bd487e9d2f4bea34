import { resolveAdaptiveOptions } from '../adaptive/resolve-adaptive-options.js';
import { horizonProblem, MIN_RATE } from '../limits/resolve-bucket.js';
import { MAX_HORIZON_MS } from '../store/horizon.js';
import type { AfterHandlerStep } from './call-steps.js';
import type { LimitPolicy } from './limit-policy.js';

/**
 * The step after the handler: each adaptive limit's controller is told the
 * outcome, with its latency and the bucket key (for `maxKeyShare`).
 */
export const reportToController: AfterHandlerStep = (outcome, { adaptive }) => {
  const { limits, checks } = outcome;
  const result = {
    error: outcome.error,
    response: outcome.response,
    latencyMs: outcome.latencyMs,
    failed: outcome.failed,
  };
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    if (limit.adaptive) adaptive.reportResult(limit.name, result, checks?.[i]?.key);
  }
};

/**
 * `adaptive`: the AIMD controller moves the limit's rate between bounds
 * (`lib/adaptive/`); acts before the store (the effective bucket) and after
 * the handler (the outcome reported).
 */
export const adaptivePolicy: LimitPolicy<'adaptive'> = {
  options: ['adaptive'],
  refusedOnConcurrency: {
    adaptive: 'is a rate-limit option; a concurrency limit has no rate to adapt',
  },
  appliesTo: (limit) => limit.adaptive !== undefined,
  afterHandler: reportToController,
  needsInterceptor: (options) => options.adaptive !== undefined,
  resolve: (options, draft, context, fail) => {
    if (options.adaptive === undefined) return { adaptive: undefined };
    const declared = options.adaptive as { isFailure?: unknown } | null;
    if (typeof declared === 'object' && declared?.isFailure !== undefined)
      context.deprecated?.('adaptive.isFailure', 'adaptive.isServerFailure', draft.name, declared);
    const adaptive = resolveAdaptiveOptions(
      options.adaptive,
      { rate: draft.rate, burst: draft.burst },
      `RateLimit: ${context.where}, limit "${draft.name}"`,
    );
    // The burst follows an adaptive rate down, at least 1 token: at `min`, the horizon is the larger of the two.
    if (horizonProblem(adaptive.min, 1) !== undefined) {
      fail(
        'adaptive.min',
        `must be at least ${MIN_RATE} tokens per second (one token per ${MAX_HORIZON_MS} ms, about 3,169 years), got ${adaptive.min}`,
      );
    }
    return { adaptive };
  },
};
