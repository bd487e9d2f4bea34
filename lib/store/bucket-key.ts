import type { AlgorithmName, RateLimitCheck, StoreLimit } from './rate-limit-store.interface.js';

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
 *   have any `|` replaced, and identities are either a canonical client
 *   address (`203.0.113.7`, `2001:db8:1:2::/64`) or bounded and prefixed by
 *   their kind (`u=`, `h=`, `k=`, `k#`, `c=`...; no address has a `=` or `#`
 *   second): the separators cannot be forged, and no kind reaches another's
 *   buckets.
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
export function bucketNamespace(
  algorithm: AlgorithmName,
  limitName: string,
  routeId: string = SHARED_ROUTE,
): string {
  return `${ALGORITHM_TAGS[algorithm]}|${limitName}|${routeId}|`;
}

/** A bucket key in its two parts: `namespace + identity === key`. */
export interface BucketKeyParts {
  readonly namespace: string;
  readonly identity: string;
}

/**
 * The parts of a bucket key given whole: everything up to the third `|` is
 * the namespace (limit names and route ids cannot hold one), the rest the
 * identity. A key of another shape (a store called directly, with keys of
 * its own) is all identity, in the empty namespace. The module passes the
 * parts with every check, so this only runs for direct callers.
 */
export function splitBucketKey(key: string): BucketKeyParts {
  let end = -1;
  for (let separators = 0; separators < 3; separators++) {
    end = key.indexOf('|', end + 1);
    if (end === -1) return { namespace: '', identity: key };
  }
  return { namespace: key.slice(0, end + 1), identity: key.slice(end + 1) };
}

/** A check of the bucket of `identity` under `namespace`, its key given whole and in parts (every check the module builds has this shape). */
export function bucketCheck(
  namespace: string,
  identity: string,
  limit: StoreLimit,
  cost: number,
): RateLimitCheck {
  return { key: namespace + identity, namespace, identity, limit, cost };
}
