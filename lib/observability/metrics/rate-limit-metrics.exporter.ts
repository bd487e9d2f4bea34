import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { RESOLVED_RATE_LIMIT_OPTIONS } from '../../rate-limit.constants.js';
import type { ResolvedModuleOptions } from '../../interfaces/resolved-module-options.interface.js';
import type { MetricsBackend } from './metrics-backend.js';
import { MetricsSubscriber } from './metrics-subscriber.js';
import { openTelemetryBackend } from './open-telemetry-backend.js';
import { prometheusBackend } from './prometheus-backend.js';
import { storeKind } from './store-kind.js';

/**
 * Starts the configured metrics exporters when the module initialises
 * (loading their peers, which fails the bootstrap when one is missing) and
 * stops them when it is destroyed, so that apps created one after another in
 * one process do not pile up subscribers. With no `metrics` option it does
 * nothing: no channel has a subscriber, and the request path pays nothing.
 *
 * @internal
 */
@Injectable()
export class RateLimitMetricsExporter implements OnModuleInit, OnModuleDestroy {
  private subscriber: MetricsSubscriber | undefined;

  constructor(
    @Inject(RESOLVED_RATE_LIMIT_OPTIONS)
    private readonly options: Pick<ResolvedModuleOptions, 'metrics' | 'store'> & {
      readonly owner?: ResolvedModuleOptions['owner'];
    },
  ) {}

  async onModuleInit(): Promise<void> {
    const { metrics, store, owner } = this.options;
    if (metrics === undefined) return;
    const backends: MetricsBackend[] = [];
    try {
      if (metrics.openTelemetry)
        backends.push(await openTelemetryBackend(metrics.openTelemetry.meterProvider ?? undefined));
      if (metrics.prometheus)
        backends.push(
          await prometheusBackend(metrics.prometheus.registry, metrics.prometheus.prefix),
        );
      const kind = storeKind(store);
      const stats = kind === 'two-tier' ? store.stats : undefined;
      this.subscriber = new MetricsSubscriber(backends, {
        storeKind: kind,
        owner,
        twoTierStats: typeof stats === 'function' ? () => stats.call(store) : undefined,
      });
    } catch (error) {
      // What was registered before the failure is removed, so a retry does not find it taken.
      for (const backend of backends) backend.close();
      throw error;
    }
    this.subscriber.start();
  }

  onModuleDestroy(): void {
    this.subscriber?.stop();
    this.subscriber = undefined;
  }
}
