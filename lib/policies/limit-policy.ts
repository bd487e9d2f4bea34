import type { RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import type { LimitContext, OptionFail } from '../limits/limit-context.js';
import type { ResolvedLimit } from '../limits/resolved-limit.js';
import type { AfterHandlerStep, DecisionStep } from './call-steps.js';

/** The fields of a resolved limit that policies own (the rest is the bucket, the key and the fail mode). */
export type PolicyField =
  'dynamic' | 'adaptive' | 'shadow' | 'charge' | 'skip' | 'blockMs' | 'maxDelayMs' | 'settle';

/** A limit while it is resolved: its bucket, key and fail mode, and the policy fields resolved so far (in registry order). */
export type LimitDraft = Omit<ResolvedLimit, PolicyField> &
  Partial<Pick<ResolvedLimit, PolicyField>>;

/**
 * One per-limit option (or a few that go together), as a unit: which options
 * it reads, how it validates them into its fields of the resolved limit, and
 * why a concurrency limit refuses them. Registered once, in
 * `limit-policies.ts`, whose order is the order of resolution: a policy may
 * read the fields of those before it (`draft.shadow`).
 *
 * What a policy does per call is a step (`call-steps.ts`): on the store's
 * decision (in the guard) or after the handler (in the interceptor). A route
 * lists the steps of the policies that apply to its limits, derived in one
 * place (`routes/enforced-limits.ts`).
 *
 * @internal
 */
export interface LimitPolicy<F extends PolicyField = PolicyField> {
  /** The options of a limit this policy reads: known names for the unknown-option check. */
  readonly options: readonly (keyof RateLimitOptions)[];
  /** Why a concurrency limit refuses each of them (absent: a concurrency limit checks it itself). */
  readonly refusedOnConcurrency?: Readonly<Partial<Record<keyof RateLimitOptions, string>>>;
  /** Validate the options (through `fail`, naming the option); this policy's fields of the resolved limit. */
  resolve(
    options: RateLimitOptions,
    draft: LimitDraft,
    context: LimitContext,
    fail: OptionFail,
  ): Pick<ResolvedLimit, F>;
  /** Whether a resolved limit uses this policy (its steps then run on the limit's routes). */
  appliesTo(limit: ResolvedLimit): boolean;
  /** Its step on the store's decision, if it has one. */
  readonly onDecision?: DecisionStep;
  /** Its step after the handler, if it has one. */
  readonly afterHandler?: AfterHandlerStep;
  /**
   * With `afterHandler`: whether a declared limit needs it, read when
   * `@RateLimit()` decides to bind `RateLimitInterceptor` (before resolution).
   */
  readonly needsInterceptor?: (options: RateLimitOptions) => boolean;
}

/** A policy of any field (what the registry lists). @internal */
export type AnyLimitPolicy = { [F in PolicyField]: LimitPolicy<F> }[PolicyField];
