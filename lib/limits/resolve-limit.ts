import type { Rate, RateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { DEFAULT_LIMIT_NAME } from '../rate-limit.constants.js';
import { bucketNamespace } from '../store/bucket-key.js';
import { describeValue, optionError } from '../errors/option-error.js';
import { rejectUnknownOptions } from '../errors/unknown-options.js';
import { checkLimitName, resolveCommonOptions } from './common-limit-options.js';
import { LIMIT_POLICIES } from '../policies/limit-policies.js';
import type { LimitDraft } from '../policies/limit-policy.js';
import type { LimitContext, OptionFail } from './limit-context.js';
import { resolveBucket } from './resolve-bucket.js';
import type { ResolvedLimit } from './resolved-limit.js';
import { resolveAlgorithm, resolveWindow } from './resolve-window.js';
import { capacityOf, type StoreLimit } from '../store/rate-limit-store.interface.js';

export type { LimitContext } from './limit-context.js';
export { compileLimitKey } from './common-limit-options.js';

/** The options of a limit's bucket, key and fail mode; then the policies' (`LIMIT_POLICIES`); then those of other kinds of limit. */
const OWN_OPTIONS: readonly (keyof RateLimitOptions)[] = [
  'name',
  'rate',
  'burst',
  'cost',
  'key',
  'scope',
  'failMode',
];
const KIND_OPTIONS: readonly (keyof RateLimitOptions)[] = [
  'concurrency',
  'leaseTimeout',
  'algorithm',
  'calendar',
];

/** Every option of a limit (in `@RateLimit()`, the module's `limits` and `defaults`), rate or concurrency. */
export const LIMIT_OPTIONS: readonly string[] = Object.freeze([
  ...OWN_OPTIONS,
  ...LIMIT_POLICIES.flatMap((policy) => policy.options),
  ...KIND_OPTIONS,
]);

/**
 * Validate one declared limit and turn it into a {@link ResolvedLimit}: its
 * bucket, cost, key, scope and fail mode here, then each policy's fields
 * (`LIMIT_POLICIES`, in order). Throws a TypeError naming the place, the
 * limit and the option.
 */
export function resolveLimit(options: RateLimitOptions, context: LimitContext): ResolvedLimit {
  const name = options?.name ?? DEFAULT_LIMIT_NAME;
  const where = `RateLimit: ${context.where}, limit "${name}"`;
  const fail = (option: string, problem: string): never => {
    throw optionError(where, option, problem);
  };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    fail('limit', `must be an object, got ${describeValue(options)}`);
  }
  // Before the values: `{ rat: 5 }` is a misspelling, not a missing rate.
  rejectUnknownOptions(where, options, LIMIT_OPTIONS);
  const draft: LimitDraft = resolveBase(options, name, context, fail);
  for (const policy of LIMIT_POLICIES)
    Object.assign(draft, policy.resolve(options, draft, context, fail));
  return draft as ResolvedLimit;
}

/** A limit's own part: name, bucket (placeholders for rate or burst functions, which the dynamic policy compiles), cost, key, scope, fail mode. */
function resolveBase(
  options: RateLimitOptions,
  name: string,
  context: LimitContext,
  fail: OptionFail,
): LimitDraft {
  checkLimitName(name, fail);
  if (options.leaseTimeout !== undefined)
    fail('leaseTimeout', 'only applies to a concurrency limit (one with concurrency: N)');
  const algorithm = resolveAlgorithm(options, fail);
  const window =
    algorithm === 'token-bucket'
      ? undefined
      : resolveWindow(options, algorithm, `RateLimit: ${context.where}, limit "${name}"`, fail);
  const dynamic =
    window === undefined &&
    (typeof options.rate === 'function' || typeof options.burst === 'function');
  // A dynamic limit's bucket is validated per call; its placeholder is never charged.
  // A window's rate and burst are its average rate and quota: what the headers read.
  const { rate, burst } =
    window !== undefined
      ? { rate: (window.quota * 1000) / window.windowMs, burst: window.quota }
      : dynamic
        ? { rate: 1, burst: 1 }
        : resolveBucket(options as { rate: Rate; burst?: number }, fail);
  const bucket: StoreLimit = window ?? Object.freeze({ algorithm: 'token-bucket', rate, burst });

  const cost = options.cost ?? 1;
  if (typeof cost === 'number') {
    if (!Number.isFinite(cost) || cost <= 0)
      fail('cost', `must be a positive number or a function, got ${describeValue(cost)}`);
    const capacity = capacityOf(bucket);
    const what = window === undefined ? 'burst' : 'the quota';
    if (!dynamic && cost > capacity)
      fail('cost', `(${cost}) is larger than ${what} (${capacity}): every request would be denied`);
  } else if (typeof cost !== 'function') {
    fail('cost', `must be a positive number or a function, got ${describeValue(cost)}`);
  }

  const { identify, route, failMode } = resolveCommonOptions(options, name, context, fail);
  return {
    name,
    rate,
    burst,
    bucket,
    cost,
    identify,
    namespace: bucketNamespace(algorithm, name, route),
    failMode,
  };
}
