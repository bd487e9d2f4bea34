import type { RateLimitStoreStats } from '../../lib/store/rate-limit-store.interface.js';

/** A snapshot of `TwoTierStore`'s counters (all since start); the metrics read those of {@link RateLimitStoreStats}. */
export interface TwoTierStoreStats extends RateLimitStoreStats {
  /** `consume` calls answered. */
  readonly decisions: number;
  /** `consume` calls answered without waiting for Redis (lease, deny cache, fallback). */
  readonly localDecisions: number;
  /** Calls made to Redis: decisions with or without lease, give-backs, peeks, resets, probes. */
  readonly redisCalls: number;
  /** Redis answers that granted extra tokens (a lease). */
  readonly leasesTaken: number;
  /** Extra tokens leased from Redis. */
  readonly leasedTokens: number;
  /** Leases whose unspent tokens were given back (expiry, eviction, close). */
  readonly leasesReturned: number;
  /** Unspent tokens given back to Redis. */
  readonly returnedTokens: number;
  /** Unspent tokens that could not be given back (Redis failing, or the store running on its fallback). */
  readonly lostTokens: number;
  /** Requests denied by the local deny cache, without asking Redis. */
  readonly denyCacheHits: number;
  /** Switches to the local fallback (Redis failed). */
  readonly fallbacks: number;
  /** Decisions taken by the local fallback. */
  readonly fallbackDecisions: number;
  /** Returns to Redis after a fallback (a probe succeeded). */
  readonly recoveries: number;
  /** Keys currently tracked by the local tier. */
  readonly localKeys: number;
  /** True while the store runs on its local fallback. */
  readonly degraded: boolean;
}
