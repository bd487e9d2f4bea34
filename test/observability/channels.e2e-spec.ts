/**
 * The internal observability sink: what the guard, the limiter and the
 * adaptive provider publish on `node:diagnostics_channel`, seen by a
 * subscriber as an exporter would see it.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { AdaptiveRateProvider, ManualClock, RateLimit, RateLimitModule } from 'nestjs-holdup';
import type {
  DecisionEvent,
  RateLimitChannelEvents,
  StoreFailureEvent,
} from 'nestjs-holdup/observability';
import { FlakyStore } from '../fail-mode/fail-mode.fixtures.js';
import { createApp, PLATFORMS } from '../utils/create-app.js';

@Controller('observed')
class ObservedController {
  @RateLimit({ name: 'observed', rate: 1, burst: 2, key: 'global' })
  @Get()
  get(): string {
    return 'ok';
  }

  @RateLimit({
    name: 'tuned',
    rate: 100,
    burst: 10,
    key: 'global',
    adaptive: { min: 10, max: 100, jitter: 0, minOutcomes: 1 },
  })
  @Get('tuned')
  tuned(): string {
    return 'ok';
  }
}

/** Collects what one channel publishes while `run` runs. */
async function collect<N extends keyof RateLimitChannelEvents>(
  name: N,
  run: () => Promise<void>,
): Promise<RateLimitChannelEvents[N][]> {
  const events: RateLimitChannelEvents[N][] = [];
  const listener = (message: unknown) => events.push(message as RateLimitChannelEvents[N]);
  subscribe(name, listener);
  try {
    await run();
  } finally {
    unsubscribe(name, listener);
  }
  return events;
}

describe.each(PLATFORMS)('diagnostics channels (%s)', (platform) => {
  let app: INestApplication;
  const store = new FlakyStore();
  const clock = new ManualClock(1_000_000);

  beforeAll(async () => {
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ store, clock })],
      controllers: [ObservedController],
    });
  });
  afterAll(() => app.close());
  afterEach(() => {
    store.behaviour = 'ok';
  });

  it('publishes one decision per request: admitted, then denied, with route and limit names but no caller identity', async () => {
    const events = await collect('nestjs-holdup:decision', async () => {
      for (const status of [200, 200, 429])
        await request(app.getHttpServer()).get('/observed').expect(status);
    });
    expect(events.map((event: DecisionEvent) => event.result)).toEqual([
      'admitted',
      'admitted',
      'denied',
    ]);
    expect(events[0]).toMatchObject({
      route: 'ObservedController.get:observed',
      transport: 'http',
      limits: ['observed'],
    });
    expect(events[2]!.decisions).toEqual([
      expect.objectContaining({ allowed: false, remaining: 0 }),
    ]);
    expect(JSON.stringify(events)).not.toContain('127.0.0.1');
    clock.advance(2000);
  });

  it('publishes store failures and the fail-open decision they led to', async () => {
    store.behaviour = 'reject';
    let failures: StoreFailureEvent[] = [];
    const decisions = await collect('nestjs-holdup:decision', async () => {
      failures = await collect('nestjs-holdup:store-failure', async () => {
        await request(app.getHttpServer()).get('/observed').expect(200);
      });
    });
    expect(failures).toEqual([
      {
        error: expect.any(Error),
        failMode: 'open',
        consecutiveFailures: 1,
        owner: expect.objectContaining({ id: expect.any(Number) }),
      },
    ]);
    expect(decisions.map((event) => event.result)).toEqual(['fail-open']);
  });

  it('publishes adaptive rate changes', async () => {
    const adaptive = app.get(AdaptiveRateProvider);
    const changes = await collect('nestjs-holdup:rate-change', async () => {
      adaptive.current('tuned');
      adaptive.report('tuned', 'failure');
      clock.advance(1000);
      adaptive.current('tuned');
    });
    expect(changes).toMatchObject([
      { name: 'tuned', previousRate: 100, rate: 80, direction: 'decrease' },
    ]);
  });
});
