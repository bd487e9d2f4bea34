import { describeValue } from '../errors/option-error.js';
import type { FailMode } from '../interfaces/rate-limit-options.interface.js';

/** From the most lenient to the strictest: the order in which one request's limits are combined. */
const BY_STRICTNESS: readonly FailMode[] = ['open', 'local', 'closed'];

/**
 * What is wrong with a declared `failMode`, or `undefined` when it is fine.
 * `'local'` is only meaningful with a store that can decide locally, so it is
 * refused at start-up with any other store rather than quietly acting as `'open'`.
 */
export function failModeProblem(
  value: unknown,
  storeHasLocalFallback: boolean,
): string | undefined {
  if (!BY_STRICTNESS.includes(value as FailMode))
    return `must be 'open', 'closed' or 'local', got ${describeValue(value)}`;
  if (value === 'local' && !storeHasLocalFallback) {
    return "'local' needs a store that can decide locally when its shared backend fails (TwoTierStore); this store cannot";
  }
  return undefined;
}

/** The fail mode of a request several limits apply to: the strictest of theirs. */
export function strictestFailMode(modes: Iterable<FailMode>): FailMode {
  let strictest = 0;
  for (const mode of modes) strictest = Math.max(strictest, BY_STRICTNESS.indexOf(mode));
  return BY_STRICTNESS[strictest]!;
}
