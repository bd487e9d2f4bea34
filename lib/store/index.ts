// `nestjs-holdup/store`: what a custom store needs. The store contract (and
// the optional concurrency-slots capability), the helpers the built-in stores
// share (as values: usable at run time), and the shared contract suites a
// store can run in its own tests. The per-algorithm math is in
// `nestjs-holdup/algorithms`. Not needed to use the module; more likely than
// the root entry point to change between minor versions while the library is 0.x.

// The contract
export {
  capacityOf,
  isWindowLimit,
  allTokenBuckets,
  type RateLimitStore,
  type AlgorithmName,
  type TokenBucketLimit,
  type CalendarAlignment,
  type FixedWindowLimit,
  type SlidingWindowLimit,
  type WindowLimit,
  type StoreLimit,
  type BucketRef,
  type RateLimitCheck,
  type TokenBucketCheck,
  type ConsumeRequest,
  type TokenBucketRequest,
  type ConsumeResult,
  type BucketsRequest,
  type RefundRequest,
  type BlockCheck,
  type SettleCheck,
  type SettleRequest,
  type BlockRequest,
  type MaybePromise,
  type LocalFallback,
  type StoreHealth,
  type HealthRequest,
} from './rate-limit-store.interface.js';
export type {
  ConcurrencySlots,
  SlotAcquireRequest,
  SlotAcquireResult,
  SlotReleaseRequest,
} from './concurrency-slots.interface.js';
export type { RateLimitDecision } from '../algorithms/rate-limit-decision.js';
export { RateLimitStoreError, toStoreError } from '../errors/rate-limit-store.error.js';

// Helpers of the built-in in-process stores
export { algorithmOf, type BucketAlgorithm, type BucketState } from '../algorithms/algorithm.js';
export { consumeAllOrNothing, reportUncharged, type BucketStates } from './all-or-nothing.js';
export { bucketNamespace } from './bucket-key.js';
export { RelativeTime } from './relative-time.js';
export { SweptMap } from './swept-map.js';

// The shared contract suites (Jest or Vitest)
export { describeStoreContract, type StoreContractOptions } from './contract/store-contract.js';
export { describeWindowStoreContract } from './contract/window-store-contract.js';
export type { StoreContractFramework } from './contract/framework.js';
