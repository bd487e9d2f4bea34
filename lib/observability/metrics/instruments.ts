/**
 * The instruments, described once for every exporter. Names and attributes
 * follow OpenTelemetry conventions (and ASP.NET Core's
 * `aspnetcore.rate_limiting.*` where they fit: a `policy` and a `result`);
 * the Prometheus exporter derives its names from them (`.` → `_`, `_total`
 * on counters, the unit as a suffix). Attributes are bounded: limit names,
 * results, transports and store kinds, never a bucket key, caller or path.
 */

/** How an instrument is reported. */
export type InstrumentKind = 'counter' | 'histogram' | 'observable-gauge' | 'observable-counter';

/** One instrument. */
export interface InstrumentSpec {
  readonly name: string;
  readonly kind: InstrumentKind;
  /** UCUM unit as OpenTelemetry writes it (`s`, `{request}`). */
  readonly unit: string;
  readonly description: string;
  /** Attribute keys, without the `rate_limiting.` namespace. */
  readonly attributes: readonly string[];
}

/** The namespace of every instrument and attribute. */
export const METRICS_NAMESPACE = 'rate_limiting';

/** Store call duration buckets, in seconds: 50 µs (memory) to 1 s (a Redis timeout). */
export const STORE_DURATION_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** A request is near the limit when it is admitted with fewer than this share of the burst left. */
export const NEAR_LIMIT_SHARE = 0.1;

const spec = (
  name: string,
  kind: InstrumentKind,
  unit: string,
  description: string,
  attributes: readonly string[],
): InstrumentSpec => ({
  name: `${METRICS_NAMESPACE}.${name}`,
  kind,
  unit,
  description,
  attributes,
});

/** Every instrument, by role. */
export const INSTRUMENTS = {
  requests: spec(
    'requests',
    'counter',
    '{request}',
    'Rate-limit decisions, one per limit that applied to a request, by result',
    ['policy', 'result', 'transport'],
  ),
  nearLimit: spec(
    'near_limit',
    'counter',
    '{request}',
    'Admitted requests that left less than 10% of the burst',
    ['policy', 'transport'],
  ),
  storeDuration: spec('store.duration', 'histogram', 's', 'Duration of rate-limit store calls', [
    'store',
    'outcome',
  ]),
  storeFailures: spec(
    'store.failures',
    'counter',
    '{failure}',
    'Failed rate-limit store calls, by the fail mode that resolved them',
    ['store', 'fail_mode'],
  ),
  localFallback: spec(
    'local_fallback',
    'counter',
    '{request}',
    "Decisions a store's local tier took instead of its backend",
    ['store'],
  ),
  adaptiveRate: spec(
    'adaptive.rate',
    'observable-gauge',
    '{token}/s',
    'Effective rate of each adaptive limit',
    ['policy'],
  ),
  concurrencyLimit: spec(
    'concurrency.limit',
    'observable-gauge',
    '{request}',
    'Calls in flight each adaptive concurrency limit allows (its most recently changed key)',
    ['policy'],
  ),
  twoTierRedisCalls: spec(
    'two_tier.redis_calls',
    'observable-counter',
    '{call}',
    'Redis calls made by the two-tier store',
    ['store'],
  ),
  twoTierLeases: spec(
    'two_tier.leases',
    'observable-counter',
    '{lease}',
    'Token leases the two-tier store took from Redis',
    ['store'],
  ),
  twoTierDenyCacheHits: spec(
    'two_tier.deny_cache_hits',
    'observable-counter',
    '{request}',
    "Denials the two-tier store's deny cache answered without Redis",
    ['store'],
  ),
  twoTierLocalDecisions: spec(
    'two_tier.local_decisions',
    'observable-counter',
    '{request}',
    'Decisions the two-tier store took from a local lease',
    ['store'],
  ),
} as const satisfies Record<string, InstrumentSpec>;

/** The attribute key as exported: `rate_limiting.policy`. */
export function attributeKey(attribute: string): string {
  return `${METRICS_NAMESPACE}.${attribute}`;
}

/**
 * The Prometheus name of an instrument: dots become underscores, seconds
 * get `_seconds`, counters `_total` (Prometheus' naming conventions).
 */
export function prometheusName(instrument: InstrumentSpec, prefix = ''): string {
  let name = prefix + instrument.name.replace(/\./g, '_');
  if (instrument.unit === 's') name += '_seconds';
  if (instrument.kind === 'counter' || instrument.kind === 'observable-counter') name += '_total';
  return name;
}
