// nestjs-holdup/terminus: the store's health for @nestjs/terminus (an optional peer, imported only here)
export {
  RateLimitHealthIndicator,
  type RateLimitHealthOptions,
} from './rate-limit-health.indicator.js';
export { RateLimitHealthModule } from './rate-limit-health.module.js';
export type { StoreHealth, HealthRequest } from '../store/rate-limit-store.interface.js';
