export * from './algorithms/gcra.js';
export * from './store/rate-limit-store.interface.js';
export * from './clock.js';
export { MemoryStore, type MemoryStoreOptions } from '../adapters/memory/index.js';
