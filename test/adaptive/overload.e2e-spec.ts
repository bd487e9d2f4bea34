/**
 * The adaptive loop closed through real HTTP, on Express and on Fastify: a
 * route declared at 100/s in front of a downstream that serves 30 calls per
 * second and answers 503 above that, offered 100 requests per second of
 * module time (the injected clock moves 10 ms per request, no sleeping).
 * The limit must come down to about the downstream's capacity, the 503s must
 * (nearly) stop, and the headers must show the smaller quota.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { AdaptiveRateProvider, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import {
  DECLARED_BURST,
  DECLARED_RATE,
  DOWNSTREAM_CAPACITY,
  OverloadedController,
  overloadClock,
  resetDownstream,
} from './overloaded.controller.js';

const OFFERED_PER_SECOND = 100;
const WINDOWS = 30;

interface WindowTally {
  ok: number;
  failed: number;
  denied: number;
}

describe.each(PLATFORMS)(
  'an adaptive limit in front of an overloaded downstream (%s)',
  (platform) => {
    let app: INestApplication;
    let adaptive: AdaptiveRateProvider;

    beforeEach(async () => {
      resetDownstream();
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ clock: overloadClock })],
        controllers: [OverloadedController],
      });
      adaptive = app.get(AdaptiveRateProvider);
    });
    afterEach(() => app.close());

    it('brings the rate down to the capacity, stops the 503s, and shows the new quota in the headers', async () => {
      const windows: WindowTally[] = Array.from({ length: WINDOWS }, () => ({
        ok: 0,
        failed: 0,
        denied: 0,
      }));
      const rates: number[] = [];
      let lastPolicy = '';
      let limitAtLastResponse = { rate: 0, burst: 0 };
      const server = app.getHttpServer();
      for (let w = 0; w < WINDOWS; w++) {
        for (let i = 0; i < OFFERED_PER_SECOND; i++) {
          const res = await request(server).get('/overloaded');
          const tally = windows[w]!;
          if (res.status === 200) tally.ok++;
          else if (res.status === 503) tally.failed++;
          else if (res.status === 429) tally.denied++;
          else throw new Error(`unexpected status ${res.status}`);
          lastPolicy = res.headers['ratelimit-policy'] as string;
          limitAtLastResponse = adaptive.effectiveLimit('downstream'); // before the clock moves on
          overloadClock.advance(1000 / OFFERED_PER_SECOND);
        }
        rates.push(adaptive.effectiveLimit('downstream').rate);
      }
      if (process.env.HOLDUP_REPORT) console.log(JSON.stringify({ platform, rates, windows }));

      const failed = (from: number, to: number) =>
        windows.slice(from, to).reduce((sum, t) => sum + t.failed, 0);
      const served = (from: number, to: number) =>
        windows.slice(from, to).reduce((sum, t) => sum + t.ok, 0);
      // At the declared rate the downstream was overloaded...
      expect(failed(0, 3)).toBeGreaterThan(50);
      // ...and the limit came down to about its capacity, and stayed there.
      for (const rate of rates.slice(-10)) {
        expect(rate).toBeGreaterThanOrEqual(0.6 * DOWNSTREAM_CAPACITY);
        expect(rate).toBeLessThanOrEqual(1.4 * DOWNSTREAM_CAPACITY);
      }
      // The 503s (nearly) stopped: over the last 10 windows they stay under the
      // AIMD failure threshold (10 %), the residue of additive increase probing
      // just above the capacity, against 160 in the first 3 windows alone.
      expect(failed(WINDOWS - 10, WINDOWS)).toBeLessThanOrEqual(
        0.1 * served(WINDOWS - 10, WINDOWS),
      );
      expect(failed(WINDOWS - 10, WINDOWS)).toBeLessThan(failed(0, 3) / 5);
      // The downstream kept serving close to its capacity meanwhile.
      expect(served(WINDOWS - 10, WINDOWS)).toBeGreaterThanOrEqual(10 * DOWNSTREAM_CAPACITY * 0.7);
      // The headers show the quota of the effective bucket, smaller than declared.
      const { rate, burst } = limitAtLastResponse;
      expect(rate).toBeLessThan(DECLARED_RATE);
      expect(burst).toBeLessThan(DECLARED_BURST);
      expect(lastPolicy).toBe(`"downstream";q=${burst};w=${Math.max(1, Math.ceil(burst / rate))}`);
    }, 60_000);
  },
);
