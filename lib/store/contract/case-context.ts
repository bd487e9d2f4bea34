/**
 * What the store contract's cases share: the context the suite gives them
 * (`describeStoreContract` registers them, each group in a file of its own by
 * operation) and the helpers they build requests with.
 */
import type {
  BucketRef,
  RateLimitCheck,
  RateLimitStore,
  TokenBucketLimit,
} from '../rate-limit-store.interface.js';
import type { StoreContractFramework } from './framework.js';

/** What the cases need from the suite that registers them. @internal */
export interface ContractCaseContext {
  readonly it: StoreContractFramework['it'];
  readonly expect: StoreContractFramework['expect'];
  /** The store of the running test. */
  readonly store: () => RateLimitStore;
  /** A bucket key no other test (or worker, or run) uses. */
  readonly key: (label?: string) => string;
  /** Time of the first step of each scenario. */
  readonly T0: number;
}

/** A token bucket as the store contract takes it. @internal */
export const tokenBucket = (rate: number, burst: number): TokenBucketLimit => ({
  algorithm: 'token-bucket',
  rate,
  burst,
});

/** A bucket of `key` (no cost): what `peek`, `reset` and `block` take. @internal */
export const bucket = (key: string, rate: number, burst: number): BucketRef => ({
  key,
  limit: tokenBucket(rate, burst),
});

/** Requests on the running test's store. @internal */
export function contractHelpers(store: () => RateLimitStore) {
  return {
    check: (k: string, rate: number, burst: number, cost = 1): RateLimitCheck => ({
      key: k,
      limit: tokenBucket(rate, burst),
      cost,
    }),
    consume: async (now: number, ...checks: RateLimitCheck[]) => store().consume({ checks, now }),
    peek: async (now: number, ...checks: RateLimitCheck[]) =>
      store().peek({ checks: checks.map(({ key: k, limit }) => ({ key: k, limit })), now }),
  };
}
