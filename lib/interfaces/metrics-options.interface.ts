/**
 * The part of an OpenTelemetry `MeterProvider` the exporter uses. Typed here,
 * not imported from `@opentelemetry/api`, so that the library's public types
 * never require the optional peer to be installed.
 */
export interface MeterProviderLike {
  getMeter(name: string, version?: string): unknown;
}

/** The part of a prom-client `Registry` the exporter uses (see {@link MeterProviderLike} for why). */
export interface PrometheusRegistryLike {
  getSingleMetric(name: string): unknown;
  registerMetric(metric: never): void;
  removeSingleMetric(name: string): void;
}

/**
 * Module option `metrics`: which exporters read the limiter's decisions.
 * Each exporter's peer dependency is loaded only when it is configured.
 *
 * @publicApi
 */
export interface RateLimitMetricsOptions {
  /**
   * OpenTelemetry (`@opentelemetry/api`): `true` uses the global meter
   * provider, `{ meterProvider }` a given one.
   */
  readonly openTelemetry?: true | { readonly meterProvider?: MeterProviderLike };
  /**
   * prom-client: the instruments are registered on `registry` (never on the
   * global default registry unless it is the one given), names prefixed with `prefix`.
   */
  readonly prometheus?: { readonly registry: PrometheusRegistryLike; readonly prefix?: string };
}

/** The `metrics` option after validation. @internal */
export interface ResolvedMetricsOptions {
  /** `null`: the global meter provider. */
  readonly openTelemetry: { readonly meterProvider: MeterProviderLike | null } | undefined;
  readonly prometheus:
    { readonly registry: PrometheusRegistryLike; readonly prefix: string } | undefined;
}
