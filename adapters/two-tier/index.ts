export { TwoTierStore, type TwoTierStoreOptions, type TwoTierStoreStats} from './two-tier.store.js';
