export { TwoTierStore } from './two-tier.store.js';
export type { TwoTierStoreOptions } from './two-tier.options.js';
export type { TwoTierStoreStats } from './two-tier.stats.js';
