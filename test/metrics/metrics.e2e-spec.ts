/**
 * The metrics exporters end to end: requests through a real server, counted
 * by the OpenTelemetry SDK and by a prom-client registry, exactly.
 */
import type { INestApplication } from '@nestjs/common';
import { Registry } from 'prom-client';
import request from 'supertest';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { FlakyStore } from '../fail-mode/fail-mode.fixtures.js';
import { createApp, PLATFORMS, type Platform } from '../utils/create-app.js';
import {
  histogramCount,
  MeteredController,
  openTelemetrySdk,
  PolicyMeteredController,
  pointValue,
} from './metrics.fixtures.js';

const N = 5;

async function withApp(
  platform: Platform,
  options: RateLimitModuleOptions,
  run: (app: INestApplication) => Promise<void>,
): Promise<void> {
  const app = await createApp(platform, {
    imports: [RateLimitModule.forRoot({ clock: new ManualClock(1_000_000), ...options })],
    controllers: [MeteredController],
  });
  try {
    await run(app);
  } finally {
    await app.close();
  }
}

/** N requests; the statuses received. */
async function drive(app: INestApplication): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < N; i++)
    statuses.push((await request(app.getHttpServer()).get('/metered')).status);
  return statuses;
}

describe.each(PLATFORMS)('metrics (%s)', (platform) => {
  it('OpenTelemetry counts each admitted and denied decision, near-limit requests and store calls', async () => {
    const otel = openTelemetrySdk();
    await withApp(
      platform,
      { metrics: { openTelemetry: { meterProvider: otel.provider } } },
      async (app) => {
        const statuses = await drive(app);
        const denied = statuses.filter((s) => s === 429).length;
        expect(denied).toBe(2);
        const requests = await otel.points('rate_limiting.requests');
        const attributes = { 'rate_limiting.policy': 'metered', 'rate_limiting.transport': 'http' };
        expect(pointValue(requests, { ...attributes, 'rate_limiting.result': 'admitted' })).toBe(
          N - denied,
        );
        expect(pointValue(requests, { ...attributes, 'rate_limiting.result': 'denied' })).toBe(
          denied,
        );
        expect(requests).toHaveLength(2);
        // Remaining 2, 1, 0 of a burst of 3: only the last admitted request left less than 10 %.
        expect(pointValue(await otel.points('rate_limiting.near_limit'), attributes)).toBe(1);
        // The memory store answers synchronously: counted as decisions, never timed.
        expect(await otel.points('rate_limiting.store.duration')).toEqual([]);
      },
    );
    await otel.provider.shutdown();
  });

  it('shadow denials and skipped limits are counted under their own results, not as admissions or denials', async () => {
    const registry = new Registry();
    const app = await createApp(platform, {
      imports: [
        RateLimitModule.forRoot({
          clock: new ManualClock(1_000_000),
          metrics: { prometheus: { registry } },
        }),
      ],
      controllers: [PolicyMeteredController],
    });
    try {
      for (let i = 0; i < 3; i++)
        expect((await request(app.getHttpServer()).get('/policies')).status).toBe(200);
      expect(
        (await request(app.getHttpServer()).get('/policies').set('x-internal', '1')).status,
      ).toBe(200);
      // Shadow decisions are not awaited by the request: let them land.
      await new Promise((resolve) => setImmediate(resolve));
      const requests = (await registry.getMetricsAsJSON()).find(
        (m) => m.name === 'rate_limiting_requests_total',
      );
      const value = (policy: string, result: string) =>
        requests?.values.find((v) => v.labels.policy === policy && v.labels.result === result)
          ?.value;
      expect(value('trial', 'shadow-denied')).toBe(3); // the 2nd, 3rd and 4th request (the skip only skips 'partners')
      expect(value('trial', 'denied')).toBeUndefined();
      expect(value('partners', 'admitted')).toBe(3);
      expect(value('partners', 'skipped')).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('prom-client counts the same on the given registry, with Prometheus names', async () => {
    const registry = new Registry();
    await withApp(platform, { metrics: { prometheus: { registry } } }, async (app) => {
      const denied = (await drive(app)).filter((s) => s === 429).length;
      expect(denied).toBe(2);
      const metrics = await registry.getMetricsAsJSON();
      const requests = metrics.find((m) => m.name === 'rate_limiting_requests_total');
      expect(requests?.type).toBe('counter');
      expect(requests?.help).toMatch(/decisions/);
      const value = (result: string) =>
        requests?.values.find(
          (v) =>
            v.labels.result === result &&
            v.labels.policy === 'metered' &&
            v.labels.transport === 'http',
        )?.value;
      expect(value('admitted')).toBe(N - denied);
      expect(value('denied')).toBe(denied);
      const text = await registry.metrics();
      expect(text).not.toContain('rate_limiting_store_duration_seconds_count');
      expect(text).toContain('rate_limiting_near_limit_total{policy="metered",transport="http"} 1');
    });
    // Closed: its metrics are removed, so the registry can serve another application.
    expect(await registry.getMetricsAsJSON()).toEqual([]);
  });

  it.each([
    ['open', 'throw'],
    ['closed', 'reject'],
  ] as const)(
    'a failing store with failMode %s (%s) counts the fail-mode decisions and the store failures',
    async (failMode, behaviour) => {
      const registry = new Registry();
      const otel = openTelemetrySdk();
      const store = new FlakyStore();
      store.behaviour = behaviour;
      await withApp(
        platform,
        {
          store,
          failMode,
          metrics: { prometheus: { registry }, openTelemetry: { meterProvider: otel.provider } },
        },
        async (app) => {
          const statuses = await drive(app);
          expect(statuses).toEqual(Array(N).fill(failMode === 'open' ? 200 : 503));
          const requests = await otel.points('rate_limiting.requests');
          expect(
            pointValue(requests, {
              'rate_limiting.policy': 'metered',
              'rate_limiting.result': `fail-${failMode}`,
            }),
          ).toBe(N);
          expect(requests).toHaveLength(1);
          const failures = await otel.points('rate_limiting.store.failures');
          expect(
            pointValue(failures, {
              'rate_limiting.store': 'custom',
              'rate_limiting.fail_mode': failMode,
            }),
          ).toBe(N);
          const text = await registry.metrics();
          expect(text).toContain(
            `rate_limiting_requests_total{policy="metered",result="fail-${failMode}",transport="http"} ${N}`,
          );
          expect(text).toContain(
            `rate_limiting_store_failures_total{store="custom",fail_mode="${failMode}"} ${N}`,
          );
          // Only a rejected promise was waited for, so only it is timed.
          const timed = behaviour === 'reject' ? N : 0;
          expect(
            histogramCount(await otel.points('rate_limiting.store.duration'), {
              'rate_limiting.store': 'custom',
              'rate_limiting.outcome': 'failure',
            }),
          ).toBe(timed);
          if (timed > 0)
            expect(text).toContain(
              `rate_limiting_store_duration_seconds_count{store="custom",outcome="failure"} ${N}`,
            );
          else expect(text).not.toContain('rate_limiting_store_duration_seconds_count');
        },
      );
      await otel.provider.shutdown();
    },
  );
});

describe('metrics: start-up', () => {
  it('a second module on the same registry fails the bootstrap, naming the option and the metric', async () => {
    const registry = new Registry();
    await withApp('express', { metrics: { prometheus: { registry } } }, async () => {
      await expect(
        withApp('express', { metrics: { prometheus: { registry } } }, async () => undefined),
      ).rejects.toThrow(
        /RateLimitModule: metrics\.prometheus\.registry already has a metric named rate_limiting_requests_total/,
      );
    });
  });

  it('two applications on two registries, or one with a prefix, both start', async () => {
    const one = new Registry();
    const two = new Registry();
    await withApp('express', { metrics: { prometheus: { registry: one } } }, async () => {
      await withApp(
        'express',
        { metrics: { prometheus: { registry: two } } },
        async () => undefined,
      );
      await withApp(
        'express',
        { metrics: { prometheus: { registry: one, prefix: 'b_' } } },
        async () => {
          expect((await one.getMetricsAsJSON()).map((m) => m.name)).toContain(
            'b_rate_limiting_requests_total',
          );
        },
      );
    });
  });

  it('two applications in one process each count only their own decisions, handed to their exporter without the decision channel', async () => {
    const { rateLimitChannels } = await import('../../lib/observability/rate-limit-channels.js');
    const one = new Registry();
    const two = new Registry();
    const decisions = async (registry: Registry) =>
      (await registry.getMetricsAsJSON())
        .find((m) => m.name === 'rate_limiting_requests_total')
        ?.values.reduce((sum, v) => sum + v.value, 0) ?? 0;
    await withApp('express', { metrics: { prometheus: { registry: one } } }, async (first) => {
      await withApp('express', { metrics: { prometheus: { registry: two } } }, async (second) => {
        expect(rateLimitChannels.decision.hasSubscribers).toBe(false);
        // Interleaved, so that each decision's module differs from the one before.
        for (let i = 0; i < 3; i++) {
          await request(first.getHttpServer()).get('/metered');
          await request(second.getHttpServer()).get('/metered');
          await request(second.getHttpServer()).get('/metered');
        }
        expect(await decisions(one)).toBe(3);
        expect(await decisions(two)).toBe(6);
      });
      // The second one closed: the first still counts.
      await request(first.getHttpServer()).get('/metered');
      expect(await decisions(one)).toBe(4);
    });
  });

  it('without the metrics option nothing subscribes', async () => {
    const { rateLimitChannels } = await import('../../lib/observability/rate-limit-channels.js');
    await withApp('express', {}, async (app) => {
      await drive(app);
      expect(rateLimitChannels.decision.hasSubscribers).toBe(false);
      expect(rateLimitChannels.storeCall.hasSubscribers).toBe(false);
    });
    const registry = new Registry();
    await withApp('express', { metrics: { prometheus: { registry } } }, async () => {
      expect(rateLimitChannels.storeCall.hasSubscribers).toBe(true);
    });
    expect(rateLimitChannels.storeCall.hasSubscribers).toBe(false);
  });

  it.each([
    [{ openTelemetry: 'yes' }, /metrics\.openTelemetry must be true or \{ meterProvider \}/],
    [{ prometheus: {} }, /metrics\.prometheus\.registry must be a prom-client Registry/],
    [
      { prometheus: { registry: new Registry(), prefix: '1x' } },
      /metrics\.prometheus\.prefix must be a Prometheus name prefix/,
    ],
    [{ promethus: {} }, /metrics\.promethus is not an option \(did you mean prometheus\?\)/],
    [{}, /metrics must configure openTelemetry or prometheus/],
  ])('rejects metrics %p at start-up', async (metrics, message) => {
    await expect(
      withApp('express', { metrics: metrics as never }, async () => undefined),
    ).rejects.toThrow(message);
  });
});
