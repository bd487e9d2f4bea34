import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { MemoryStore, RateLimitModule } from 'nestjs-holdup';
import type { DecisionEvent } from 'nestjs-holdup/observability';
import { createApp } from '../utils/create-app.js';
import { GenerationsController, inFlight } from './generations.controller.js';

/** Concurrency decisions go through the decision channel like any other, under their limit's name (what the metrics count). */
describe('concurrency: decisions on the decision channel', () => {
  let app: INestApplication;
  let store: MemoryStore;
  const events: DecisionEvent[] = [];
  const listener = (event: unknown) => events.push(event as DecisionEvent);

  beforeEach(async () => {
    subscribe('nestjs-holdup:decision', listener);
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store: (store = new MemoryStore()) })],
      controllers: [GenerationsController],
    });
    await app.listen(0, '127.0.0.1');
    inFlight.reset();
  });
  afterEach(async () => {
    unsubscribe('nestjs-holdup:decision', listener);
    inFlight.release();
    await app.close();
  });

  it('4 admitted and 2 denied of 6 at once; with a rate limit, both are published', async () => {
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    let refused = 0;
    const all = Array.from({ length: 6 }, () =>
      request(url)
        .get('/generate')
        .set('x-api-key', 'm')
        .then((r) => {
          if (r.status === 429 && ++refused === 2) inFlight.release();
          return r.status;
        }),
    );
    expect((await Promise.all(all)).sort()).toEqual([200, 200, 200, 200, 429, 429]);
    const generations = events.filter((event) => event.limits.join() === 'generations');
    expect(generations.map((event) => event.result).sort()).toEqual([
      'admitted',
      'admitted',
      'admitted',
      'admitted',
      'denied',
      'denied',
    ]);
    expect(
      generations.every((event) => event.bursts?.[0] === 4 && event.transport === 'http'),
    ).toBe(true);
    // The module's own subscribers (metrics, events) keep only their module's messages.
    const owner =
      events.find((event) => event.limits.join() !== 'generations')?.owner ?? generations[0]!.owner;
    expect(owner).toBeDefined();
    expect(
      generations.every(
        (event) => event.owner === owner && event.checks?.[0]?.key.startsWith('cc|generations|'),
      ),
    ).toBe(true);
    expect(generations.find((event) => event.result === 'denied')!.decisions).toEqual([
      { allowed: false, remaining: 0, retryAfterMs: 1000, resetMs: 0, reason: 'limit' },
    ]);

    events.length = 0;
    inFlight.reset();
    setTimeout(() => inFlight.release(), 50);
    expect((await request(url).get('/both').set('x-api-key', 'm')).status).toBe(200);
    expect(events.map((event) => [event.limits.join(), event.result])).toEqual([
      ['per-minute', 'admitted'],
      ['generations', 'admitted'],
    ]);
  });

  it('a request the rate limits deny takes no slot', async () => {
    inFlight.release();
    const acquire = store.slots.acquire.bind(store.slots);
    let acquisitions = 0;
    store.slots.acquire = (request) => {
      acquisitions++;
      return acquire(request);
    };
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    for (let i = 0; i < 5; i++)
      expect((await request(url).get('/both').set('x-api-key', 'rate')).status).toBe(200);
    expect(acquisitions).toBe(5);
    const denied = await request(url).get('/both').set('x-api-key', 'rate');
    expect(denied.status).toBe(429);
    expect(denied.headers['ratelimit']).toMatch(/^"per-minute";r=0;t=\d+$/);
    expect(acquisitions).toBe(5);
    expect(store.slots.size).toBe(0);
  });
});
