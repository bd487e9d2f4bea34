import type { AlgorithmName } from './rate-limit-store.interface.js';

/**
 * The one place bucket keys are shaped. A bucket key is
 *
 * ```
 * <algorithm tag>|<limit name>|<route id, or * when shared>|<caller identity>
 * ```
 *
 * - The algorithm tag keeps buckets of different algorithms apart: a limit
 *   moved from one algorithm to another starts from fresh buckets instead of
 *   reading state written in another format.
 * - Limit names are restricted at start-up to `[A-Za-z0-9_.:-]`, route ids
 *   have any `|` replaced, and identities are bounded and prefixed by their
 *   kind (`ip=`, `u=`, `h=`, `k=`, `k#`...): the separators cannot be forged.
 *
 * The namespace (everything before the identity) is computed once per limit
 * at start-up; per request only the identity is appended.
 */
const ALGORITHM_TAGS: Readonly<Record<AlgorithmName, string>> = {
  'token-bucket': 'tb',
  'fixed-window': 'fw',
  'sliding-window': 'sw',
};

/** The route part of a limit declared with `scope: 'shared'` (and of programmatic limits). */
export const SHARED_ROUTE = '*';

/** Everything of a bucket key but the caller identity. */
export function bucketNamespace(algorithm: AlgorithmName, limitName: string, routeId: string = SHARED_ROUTE): string {
  return `${ALGORITHM_TAGS[algorithm]}|${limitName}|${routeId}|`;
}
