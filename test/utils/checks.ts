import type {
  BucketRef,
  TokenBucketCheck,
  TokenBucketLimit,
} from '../../lib/store/rate-limit-store.interface.js';

/** A token bucket as the store contract takes it. */
export const tokenBucket = (rate: number, burst: number): TokenBucketLimit => ({
  algorithm: 'token-bucket',
  rate,
  burst,
});

/** One check of a store request: `cost` tokens from `key`'s token bucket. */
export const check = (key: string, rate: number, burst: number, cost = 1): TokenBucketCheck => ({
  key,
  limit: tokenBucket(rate, burst),
  cost,
});

/** One bucket of a peek or reset request. */
export const bucket = (
  key: string,
  rate: number,
  burst: number,
): BucketRef & { readonly limit: TokenBucketLimit } => ({ key, limit: tokenBucket(rate, burst) });
