export { TwoTierStore, type TwoTierStoreOptions, type TwoTierStoreStats, type TwoTierRedisFailure } from './two-tier.store.js';
