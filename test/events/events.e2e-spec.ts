/**
 * RateLimitEvents on real Express and Fastify applications (memory store,
 * ManualClock): denials and shadow denials with the limit that decided,
 * penalties, adaptive rate changes, listeners that throw or reject (the
 * response is unchanged, the failure logged once), forwarding to
 * @nestjs/event-emitter, and two applications in one process that each see
 * only their own events (metrics included).
 */
import type { INestApplication } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import request from 'supertest';
import {
  AdaptiveRateProvider,
  ManualClock,
  RateLimitEvents,
  RateLimitModule,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { EventsController, record, settled, until } from './events.fixtures.js';

const appWith = (
  platform: (typeof PLATFORMS)[number],
  options: RateLimitModuleOptions = {},
  imports: never[] = [],
) =>
  createApp(platform, {
    imports: [
      ...imports,
      RateLimitModule.forRoot({ clock: new ManualClock(1_000_000), ...options }),
    ],
    controllers: [EventsController],
  });

describe.each(PLATFORMS)('RateLimitEvents (%s)', (platform) => {
  let app: INestApplication;
  let events: RateLimitEvents;
  let clock: ManualClock;

  beforeEach(async () => {
    clock = new ManualClock(1_000_000);
    app = await appWith(platform, { clock });
    events = app.get(RateLimitEvents);
  });
  afterEach(() => app.close());
  const logs = silenceRateLimitLogs();

  it('sends a denial with the limit that denied and its bucket key, once per denied request', async () => {
    const { seen } = record(events, 'denied', 'shadow-denied');
    for (const status of [200, 200, 429, 429])
      await request(app.getHttpServer()).get('/events/limited').expect(status);
    await until(() => seen.length === 2);
    await settled();
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({
      type: 'denied',
      event: { route: 'EventsController.limited:events/limited', transport: 'http' },
    });
    const [verdict] = seen[0]!.event.verdicts;
    expect(verdict).toMatchObject({ limit: 'tight', decision: { allowed: false, remaining: 0 } });
    expect(verdict!.key).toContain('tight');
    expect(verdict!.key).toContain('127.0.0.1');
  });

  it('sends a shadow denial for a request the shadow limit would have denied, which is admitted', async () => {
    const { seen } = record(events, 'denied', 'shadow-denied');
    for (const status of [200, 200])
      await request(app.getHttpServer()).get('/events/shadowed').expect(status);
    await until(() => seen.length === 1);
    await settled();
    expect(seen.map((s) => s.type)).toEqual(['shadow-denied']);
    expect(seen[0]!.event.verdicts.map((v) => v.limit)).toEqual(['watch']);
    expect(seen[0]!.event.verdicts[0]!.key).toContain('watch');
  });

  it('sends a penalty when a denial blocks the key, with its duration', async () => {
    const { seen } = record(events, 'penalty', 'denied');
    for (const status of [200, 200, 429])
      await request(app.getHttpServer()).get('/events/penalized').expect(status);
    await until(() => seen.length === 2);
    const penalty = seen.find((s) => s.type === 'penalty')!.event as {
      limit: string;
      key: string;
      durationMs: number;
    };
    expect(penalty).toMatchObject({
      limit: 'abuse',
      durationMs: 15 * 60_000,
      route: 'EventsController.penalized:events/penalized',
    });
    expect(penalty.key).toContain('abuse');
    // Blocked already: a later denial blocks nothing more.
    await request(app.getHttpServer()).get('/events/penalized').expect(429);
    await until(() => seen.length === 3);
    await settled();
    expect(seen.filter((s) => s.type === 'penalty')).toHaveLength(1);
  });

  it('sends adaptive rate changes', async () => {
    const { seen } = record(events, 'rate-change');
    const adaptive = app.get(AdaptiveRateProvider);
    adaptive.current('tuned');
    adaptive.report('tuned', 'failure');
    clock.advance(1000);
    adaptive.current('tuned');
    await until(() => seen.length === 1);
    expect(seen[0]!.event).toMatchObject({
      name: 'tuned',
      previousRate: 100,
      rate: 80,
      direction: 'decrease',
    });
    expect(seen[0]!.event).not.toHaveProperty('owner');
  });

  it('a listener that throws or rejects changes no response, and is logged once', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let calls = 0;
      events.on('denied', () => {
        calls++;
        throw new Error('listener bug');
      });
      events.on('denied', async () => {
        calls++;
        throw new Error('async listener bug');
      });
      for (const status of [200, 200, 429, 429, 429])
        await request(app.getHttpServer()).get('/events/limited').expect(status);
      await until(() => calls === 6);
      await settled();
      const said = logs.error.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes('RateLimitEvents'));
      expect(said).toHaveLength(2);
      expect(said.join('\n')).toContain('listener bug');
      expect(said.join('\n')).toContain('async listener bug');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('an unsubscribed listener hears nothing more, and the decision channel is released', async () => {
    const { seen, stop } = record(events, 'denied');
    stop();
    for (const status of [200, 200, 429])
      await request(app.getHttpServer()).get('/events/limited').expect(status);
    await settled();
    expect(seen).toEqual([]);
    const { channel } = await import('node:diagnostics_channel');
    expect(channel('nestjs-holdup:decision').hasSubscribers).toBe(false);
  });

  it('refuses an unknown event type', () => {
    expect(() => events.on('deny' as never, () => undefined)).toThrow(
      'RateLimitEvents.on: unknown event type "deny"',
    );
  });
});

describe.each(PLATFORMS)('forwarding to @nestjs/event-emitter (%s)', (platform) => {
  const logs = silenceRateLimitLogs();

  it('emits rate-limit.<type> on the application EventEmitter2', async () => {
    const app = await appWith(platform, { events: { eventEmitter: true } }, [
      EventEmitterModule.forRoot() as never,
    ]);
    try {
      const emitter = app.get(EventEmitter2);
      const denied: unknown[] = [];
      emitter.on('rate-limit.denied', (event: unknown) => void denied.push(event));
      emitter.on('rate-limit.penalty', () => {
        throw new Error('emitter listener bug');
      });
      for (const status of [200, 200, 429])
        await request(app.getHttpServer()).get('/events/limited').expect(status);
      for (const status of [200, 200, 429])
        await request(app.getHttpServer()).get('/events/penalized').expect(status);
      await until(() => denied.length === 2);
      await settled();
      expect(denied[0]).toMatchObject({
        route: 'EventsController.limited:events/limited',
        verdicts: [{ limit: 'tight' }],
      });
      expect(
        logs.error.mock.calls.filter(([message]) =>
          String(message).includes('emitter listener bug'),
        ),
      ).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('fails the bootstrap with a clear message when the application has no EventEmitterModule', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ events: { eventEmitter: true } })],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await expect(app.init()).rejects.toThrow(
        'RateLimitModule: events.eventEmitter found no EventEmitter2 provider: import EventEmitterModule.forRoot() from @nestjs/event-emitter in the application module',
      );
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});

describe.each(PLATFORMS)('two applications in one process (%s)', (platform) => {
  it('each sees only its own events and counts only its own decisions', async () => {
    const registries = [new Registry(), new Registry()];
    const apps = await Promise.all(
      registries.map((registry) => appWith(platform, { metrics: { prometheus: { registry } } })),
    );
    try {
      const [a, b] = apps.map((app) => record(app.get(RateLimitEvents), 'denied'));
      for (const status of [200, 200, 429, 429])
        await request(apps[1]!.getHttpServer()).get('/events/limited').expect(status);
      await until(() => b!.seen.length === 2);
      await request(apps[0]!.getHttpServer()).get('/events/limited').expect(200);
      await settled();
      expect(a!.seen).toEqual([]);
      const counted = async (registry: Registry) => {
        const requests = (await registry.getMetricsAsJSON()).find(
          (m) => m.name === 'rate_limiting_requests_total',
        );
        return Object.fromEntries(requests!.values.map((v) => [String(v.labels.result), v.value]));
      };
      expect(await counted(registries[0]!)).toEqual({ admitted: 1 });
      expect(await counted(registries[1]!)).toEqual({ admitted: 2, denied: 2 });
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });
});
