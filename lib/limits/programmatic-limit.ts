import { describeValue, optionError } from '../errors/option-error.js';
import { optionNames, rejectUnknownOptions } from '../errors/unknown-options.js';
import type { Rate } from '../interfaces/rate-limit-options.interface.js';
import { DEFAULT_LIMIT_NAME } from '../rate-limit.constants.js';
import { bucketNamespace } from '../store/bucket-key.js';
import type { TokenBucketLimit } from '../store/rate-limit-store.interface.js';
import { resolveBucket } from './resolve-bucket.js';

/** A limit as the programmatic API takes it: the bucket part of {@link RateLimitOptions}. */
export interface ProgrammaticLimit {
  readonly name?: string;
  /** Tokens per second, or a string such as `'100/min'`. */
  readonly rate: Rate;
  /**
   * Bucket capacity. Without it, as on a route limit: a string rate holds its
   * count (`'10/min'`: 10 at once), a number one second of it; at least 1.
   * @default a string rate's count; a number's one second; at least 1
   */
  readonly burst?: number;
}

/** A programmatic limit after validation: its name, bucket and bucket-key namespace. @internal */
export interface ResolvedProgrammaticLimit {
  readonly name: string;
  readonly limit: TokenBucketLimit;
  readonly namespace: string;
}

/**
 * A route limit's other options (`cost`, `key`, `scope`, ...) mean nothing
 * here: refused rather than ignored.
 */
const PROGRAMMATIC_OPTIONS = optionNames<ProgrammaticLimit>({
  name: true,
  rate: true,
  burst: true,
});

/**
 * The limits `RateLimiter`'s methods are given, each validated once (per
 * object, held weakly): application code passes the same constant object
 * on every call, and pays the validation on the first.
 *
 * @internal
 */
export class ProgrammaticLimits {
  private readonly resolved = new WeakMap<ProgrammaticLimit, ResolvedProgrammaticLimit>();

  resolve(limit: ProgrammaticLimit): ResolvedProgrammaticLimit {
    let resolved = this.resolved.get(limit);
    if (!resolved) {
      if (limit === null || typeof limit !== 'object') {
        throw optionError(
          'RateLimiter',
          'limit',
          `must be an object like { name, rate, burst }, got ${describeValue(limit)}`,
        );
      }
      const name = limit.name ?? DEFAULT_LIMIT_NAME;
      rejectUnknownOptions(`RateLimiter: limit "${name}"`, limit, PROGRAMMATIC_OPTIONS);
      const { rate, burst } = resolveBucket(limit, (option, problem) => {
        throw optionError(`RateLimiter: limit "${name}"`, option, problem);
      });
      // Keyed like a `scope: 'shared'` limit whose key function returns `key`.
      resolved = {
        name,
        limit: { algorithm: 'token-bucket', rate, burst },
        namespace: bucketNamespace('token-bucket', name),
      };
      this.resolved.set(limit, resolved);
    }
    return resolved;
  }
}
