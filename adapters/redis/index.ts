export { RedisStore, DEFAULT_REDIS_TIMEOUT_MS, type RedisStoreOptions } from './redis.store.js';
export type { RedisClient } from './redis-client.interface.js';
