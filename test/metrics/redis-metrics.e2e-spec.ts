/**
 * Store call duration against the real redis-server the harness starts:
 * each request's Redis round trip is one histogram observation, attributed
 * to the `redis` store kind.
 */
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import request from 'supertest';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { RedisStore } from 'nestjs-holdup/redis';
import { connectSharedClient } from '../utils/redis-client.js';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ANSWERED_DEADLINE_MS } from '../utils/test-clock-store-options.js';
import { histogramCount, MeteredController, openTelemetrySdk } from './metrics.fixtures.js';

describe.each(PLATFORMS)('metrics: Redis store duration (%s)', (platform) => {
  let client: Redis;
  let app: INestApplication;
  const otel = openTelemetrySdk();
  const registry = new Registry();

  beforeAll(async () => {
    client = await connectSharedClient();
    const store = new RedisStore({
      client,
      keyPrefix: `metrics-${platform}-${process.pid}-${Date.now()}:`,
      timeoutMs: ANSWERED_DEADLINE_MS,
    });
    app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({
          store,
          clock: new ManualClock(1_000_000),
          metrics: { openTelemetry: { meterProvider: otel.provider }, prometheus: { registry } },
        }),
      ],
      controllers: [MeteredController],
    });
  });
  afterAll(async () => {
    await app?.close();
    await otel.provider.shutdown();
    client?.disconnect();
  });

  it('observes one duration per Redis call, in seconds, on both exporters', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await request(app.getHttpServer()).get('/metered')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const points = await otel.points('rate_limiting.store.duration');
    expect(
      histogramCount(points, {
        'rate_limiting.store': 'redis',
        'rate_limiting.outcome': 'success',
      }),
    ).toBe(4);
    const sum = (points[0]!.value as { sum: number }).sum;
    // A loopback round trip: more than nothing, far less than a second.
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(1);
    const metric = (await registry.getMetricsAsJSON()).find(
      (m) => m.name === 'rate_limiting_store_duration_seconds',
    );
    expect(metric?.type).toBe('histogram');
    expect(
      metric?.values.find(
        (v) =>
          (v as { metricName?: string }).metricName ===
            'rate_limiting_store_duration_seconds_count' && v.labels.store === 'redis',
      )?.value,
    ).toBe(4);
    const text = await registry.metrics();
    expect(text).toContain(
      'rate_limiting_store_duration_seconds_bucket{store="redis",outcome="success",le="+Inf"} 4',
    );
    expect(text).toMatch(/# TYPE rate_limiting_store_duration_seconds histogram/);
  });
});
