export {
  RedisStore,
  DEFAULT_REDIS_TIMEOUT_MS,
  type RedisStoreOptions,
  type LeaseCheck,
  type LeaseRequest,
  type LeaseResult,
} from './redis.store.js';
export type { RedisClient } from './redis-client.interface.js';
