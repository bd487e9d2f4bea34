/**
 * Metrics label cardinality under a flood of distinct callers (issue 26,
 * item 9), with prom-client and OpenTelemetry both installed and both
 * exporting: 10,000 distinct callers over 3 routes, each admitted once and
 * then denied. Attributes are limit names, results, transports and store
 * kinds, never a caller, key or path: the series counted from the Prometheus
 * registry and from the OpenTelemetry reader's collected data stay at one
 * per limit and result (and transport), whatever the number of callers.
 */
import { Controller, Get } from '@nestjs/common';
import { MetricReader, MeterProvider } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { RateLimit } from 'nestjs-holdup';
import { createGuardHarness, flushPromises, type GuardHarness } from '../utils/guard-harness.js';

@Controller('a')
class RoutesController {
  @RateLimit({ name: 'search', rate: '1/min', burst: 1 })
  @Get('search')
  search() {
    return { ok: true };
  }

  @RateLimit({ name: 'export', rate: '1/min', burst: 1, key: 'header:x-api-key' })
  @Get('export')
  export() {
    return { ok: true };
  }

  @RateLimit({ name: 'login', rate: '1/min', burst: 1 })
  @RateLimit({ name: 'login-trial', rate: '1/min', burst: 1, shadow: true })
  @Get('login')
  login() {
    return { ok: true };
  }
}

class OnDemandReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const CALLERS = 10_000;
const ROUTES = ['search', 'export', 'login'] as const;
/** The limits the routes declare: a series bound per instrument is (limits x results x transports). */
const LIMITS = ['search', 'export', 'login', 'login-trial'];

describe('metrics label cardinality under 10,000 distinct callers', () => {
  let h: GuardHarness;
  afterEach(() => h?.close());

  it('prom-client and OpenTelemetry: one series per limit and result, never per caller', async () => {
    const registry = new Registry();
    const reader = new OnDemandReader();
    const provider = new MeterProvider({ readers: [reader] });
    h = await createGuardHarness(RoutesController, {
      metrics: { prometheus: { registry }, openTelemetry: { meterProvider: provider } },
    });
    const statuses = new Map<number, number>();
    for (let i = 0; i < CALLERS; i++) {
      const route = ROUTES[i % ROUTES.length]!;
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      const caller = { ip, headers: { 'x-api-key': `key-${i}` } };
      for (let n = 0; n < 2; n++) {
        const { status } = await h.canActivate(route, caller);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: CALLERS, 429: CALLERS });
    await flushPromises();

    // Prometheus: every series of every rate-limit metric in the registry.
    const prometheusSeries = (await registry.getMetricsAsJSON())
      .filter((metric) => metric.name.startsWith('rate_limiting_'))
      .flatMap((metric) =>
        metric.values.map((value) => ({ metric: metric.name, labels: value.labels })),
      );
    const requests = prometheusSeries.filter((s) => s.metric === 'rate_limiting_requests_total');
    expect(requests.length).toBeGreaterThanOrEqual(ROUTES.length * 2); // admitted and denied, each route
    expect(requests.length).toBeLessThanOrEqual(LIMITS.length * 4);
    for (const s of requests) expect(LIMITS).toContain(s.labels['policy']);

    // OpenTelemetry: every data point of every instrument the reader collected.
    const { resourceMetrics } = await reader.collect();
    const otelPoints = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .flatMap((metric) =>
        metric.dataPoints.map((point) => ({
          metric: metric.descriptor.name,
          attributes: point.attributes as Record<string, unknown>,
        })),
      );
    const otelRequests = otelPoints.filter((p) => p.metric === 'rate_limiting.requests');
    expect(otelRequests).toHaveLength(requests.length);

    // Nowhere a caller: no label value is an address or a key of the flood.
    const values = [
      ...prometheusSeries.flatMap((s) => Object.values(s.labels).map(String)),
      ...otelPoints.flatMap((p) => Object.values(p.attributes).map(String)),
    ];
    expect(values.filter((v) => /^10\.|key-/.test(v))).toEqual([]);
    // The whole: bounded by limits x results x transports per instrument, not by 10,000.
    expect(prometheusSeries.length).toBeLessThanOrEqual(LIMITS.length * 4 * 3);
    expect(otelPoints.length).toBeLessThanOrEqual(LIMITS.length * 4 * 3);
    if (process.env.HOLDUP_REPORT)
      console.log(
        `metrics: ${2 * CALLERS} decisions from ${CALLERS} callers; prometheus ${prometheusSeries.length} series (${requests.length} of requests), OpenTelemetry ${otelPoints.length} points (${otelRequests.length} of requests)`,
        requests.map((s) => s.labels),
      );
    await provider.shutdown();
  });
});
