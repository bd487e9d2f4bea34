import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { AdaptiveRateProvider, RateLimitModule, type RateLimitTypes } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { behaviour, clock, FlakyController } from './flaky.controller.js';

describe.each(PLATFORMS)('adaptive limits end to end (%s)', (platform) => {
  let app: INestApplication;
  let adaptive: AdaptiveRateProvider;

  beforeEach(async () => {
    behaviour.mode = 'ok';
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ clock })],
      controllers: [FlakyController],
    });
    adaptive = app.get(AdaptiveRateProvider);
  });
  afterEach(() => app.close());

  /** `times` sequential GETs; the status codes, in order. */
  const hit = async (path: string, times: number): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 0; i < times; i++)
      statuses.push((await request(app.getHttpServer()).get(path)).status);
    return statuses;
  };

  it('registers adaptive limits at start-up, at their declared rate', () => {
    expect(adaptive.names().sort()).toEqual(['flaky', 'slow']);
    expect(adaptive.current('flaky')).toBe(100);
  });

  it('cuts the rate after a window of 5xx, and the guard and headers use the new bucket', async () => {
    const changes: RateLimitTypes.AdaptiveRateChange[] = [];
    adaptive.onRateChange((change) => changes.push(change));
    behaviour.mode = 'fail';
    expect(await hit('/flaky', 6)).toEqual(Array(6).fill(500));
    expect(adaptive.current('flaky')).toBe(100); // the window has not closed yet
    clock.advance(1000);
    behaviour.mode = 'ok';
    const res = await request(app.getHttpServer()).get('/flaky').expect(200);
    expect(adaptive.current('flaky')).toBe(80);
    expect(adaptive.effectiveLimit('flaky')).toEqual({ rate: 80, burst: 8 });
    expect(res.headers['ratelimit-policy']).toContain('"flaky";q=8;');
    expect(changes).toMatchObject([
      { name: 'flaky', previousRate: 100, rate: 80, direction: 'decrease' },
    ]);
  });

  it('counts thrown non-HTTP errors as failures and 4xx as successes', async () => {
    behaviour.mode = 'client-error';
    await hit('/flaky', 6);
    clock.advance(1000);
    expect(adaptive.current('flaky')).toBe(100);
    behaviour.mode = 'throw';
    await hit('/flaky', 6);
    clock.advance(1000);
    expect(adaptive.current('flaky')).toBe(80);
  });

  it('treats latency over latencyTargetMs as congestion', async () => {
    await hit('/flaky/slow', 6);
    clock.advance(1000);
    expect(adaptive.current('slow')).toBe(80);
  });

  it('takes outcomes reported by application code, and rejects unknown names', () => {
    adaptive.current('flaky'); // opens the window
    for (let i = 0; i < 5; i++) adaptive.report('flaky', 'failure');
    clock.advance(1000);
    expect(adaptive.current('flaky')).toBe(80);
    expect(() => adaptive.report('flakey', 'failure')).toThrow(
      'Unknown adaptive rate limit "flakey"',
    );
  });

  it('does not count requests the limiter denied', async () => {
    const t0 = clock.now();
    adaptive.current('flaky'); // opens the window [t0, t0 + 1000)
    clock.set(t0 + 999);
    expect(await hit('/flaky', 6)).toEqual(Array(6).fill(200)); // the bucket keeps 4 of its 10 tokens
    clock.set(t0 + 1000);
    behaviour.mode = 'fail';
    expect(await hit('/flaky', 14)).toEqual([...Array(4).fill(500), ...Array(10).fill(429)]);
    clock.set(t0 + 2000);
    // 4 outcomes < minOutcomes (5): a neutral window. Had the 429s counted, it would be bad.
    expect(adaptive.current('flaky')).toBe(100);
  });
});
