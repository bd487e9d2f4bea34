import type { BucketLimit } from '../algorithms/gcra.js';
import type { HeaderLimit } from '../headers/rate-limit-headers.js';
import { reservingBucket } from '../policies/delay/reservation.js';
import type { CompiledRoute } from '../routes/compiled-route.js';
import type { StoreLimit } from '../store/rate-limit-store.interface.js';
import type { AdaptiveRateProvider } from './adaptive-rate.provider.js';

/** A route's buckets as they are now: for the headers, and for the store. */
export interface RouteBuckets {
  readonly limits: readonly HeaderLimit[];
  readonly buckets: readonly StoreLimit[];
}

interface Built extends RouteBuckets {
  /** The provider's buckets they were built from (the same objects until a rate changes). */
  readonly sources: readonly BucketLimit[];
}

/**
 * The buckets of routes with adaptive limits, as the controllers set them
 * now. The provider returns the same bucket object until a rate changes, so
 * what is built from them is reused until then (one check per limit per call).
 *
 * @internal
 */
export class EffectiveBuckets {
  private readonly built = new WeakMap<CompiledRoute, Built>();

  constructor(private readonly adaptive: AdaptiveRateProvider) {}

  of(route: CompiledRoute): RouteBuckets {
    const cached = this.built.get(route);
    if (
      cached &&
      route.limits.every(
        (limit, i) =>
          !limit.adaptive || this.adaptive.effectiveLimit(limit.name) === cached.sources[i],
      )
    ) {
      return cached;
    }
    const sources = route.limits.map((limit): BucketLimit =>
      limit.adaptive ? this.adaptive.effectiveLimit(limit.name) : limit,
    );
    const buckets = route.limits.map((limit, i): StoreLimit => {
      const bucket: StoreLimit = limit.adaptive
        ? { algorithm: 'token-bucket', rate: sources[i]!.rate, burst: sources[i]!.burst }
        : limit.bucket;
      return reservingBucket(bucket, limit.maxDelayMs);
    });
    const limits = route.limits.map((limit, i): HeaderLimit =>
      limit.adaptive
        ? { name: limit.name, rate: sources[i]!.rate, burst: sources[i]!.burst }
        : limit,
    );
    const built = { sources, limits, buckets };
    this.built.set(route, built);
    return built;
  }
}
