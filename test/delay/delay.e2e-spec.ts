/**
 * `maxDelay` on Express and Fastify, on the memory, Redis and two-tier
 * stores: a burst is smoothed (requests wait for the token they reserved, in
 * arrival order, spaced by the rate, never over it) instead of refused,
 * requests that would wait longer than `maxDelay` are refused, and a client
 * that goes away while waiting gives its token back. Time is the test's
 * clock: waits end when it is advanced, never by sleeping.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { RateLimitEngine } from '../../lib/engine/rate-limit-engine.js';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ALL_STORES, storesOfKind } from '../utils/stores.js';
import { clockRef, DelayController, served } from './delay.controller.js';

const START = 1_700_000_000_000;

/** Resolves once `condition()` holds, checking between event-loop turns (what is awaited is the server's own work). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe.each(ALL_STORES)('maxDelay (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let clock: ManualClock;
    let engine: RateLimitEngine;
    beforeEach(async () => {
      clock = new ManualClock(START);
      clockRef.clock = clock;
      served.length = 0;
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({ clock, store: makeStore(`delay-${kind}-${platform}`) }),
        ],
        controllers: [DelayController],
      });
      await app.listen(0, '127.0.0.1');
      engine = app.get(RateLimitEngine);
    });
    afterEach(() => app.close());

    /**
     * Sends `count` requests one after another, each once the previous one is decided (queued or
     * answered). Its own answer only: an earlier request's answer arriving late (request 0 is
     * served at once) must not pass for this one's, which may not have reached the server yet.
     */
    async function burst(path: string, count: number): Promise<Promise<request.Response>[]> {
      const responses: Promise<request.Response>[] = [];
      for (let n = 0; n < count; n++) {
        const waitingBefore = engine.waits.size;
        let answered = false;
        const response = request(app.getHttpServer()).get(path).set('x-n', String(n));
        responses.push(response.then((res) => ((answered = true), res)));
        await until(
          () => engine.waits.size > waitingBefore || answered || served.some((s) => s.n === n),
          `request ${n} is decided`,
        );
      }
      return responses;
    }

    it('20 simultaneous requests, burst 1 at 10/s, maxDelay 2 s: all admitted, in arrival order, 100 ms apart', async () => {
      const responses = await burst('/smooth/2s', 20);
      expect(engine.waits.size).toBe(19);
      for (let step = 1; step <= 19; step++) {
        clock.advance(100);
        await until(() => served.length === step + 1, `request ${step} is served`);
      }
      const statuses = (await Promise.all(responses)).map((res) => res.status);
      expect(statuses).toEqual(Array(20).fill(200));
      expect(served).toEqual(Array.from({ length: 20 }, (_, n) => ({ n, at: START + 100 * n })));
    });

    it('maxDelay 1 s: the 11 that can be served within a second wait, the 9 others are refused at once', async () => {
      const responses = await burst('/smooth/1s', 20);
      expect(engine.waits.size).toBe(10);
      clock.advance(1_000);
      const results = await Promise.all(responses);
      expect(results.map((res) => res.status)).toEqual([
        ...Array(11).fill(200),
        ...Array(9).fill(429),
      ]);
      // Refused: could be queued in 100 ms (when the first waiting one proceeds).
      expect(results[11]!.headers['retry-after']).toBe('1');
    });

    it('maxDelay 300 ms: exactly the first 4 are admitted, the rest denied', async () => {
      const responses = await burst('/smooth/300ms', 20);
      for (let step = 1; step <= 3; step++) {
        clock.advance(100);
        await until(() => served.length === step + 1, `request ${step} is served`);
      }
      const results = await Promise.all(responses);
      expect(results.map((res) => res.status)).toEqual([
        ...Array(4).fill(200),
        ...Array(16).fill(429),
      ]);
      expect(served.map((s) => s.at - START)).toEqual([0, 100, 200, 300]);
    });

    it('a client that goes away while waiting gives its token back: the next request takes its place', async () => {
      const port = (app.getHttpServer().address() as AddressInfo).port;
      const first = request(app.getHttpServer()).get('/smooth/slow').set('x-n', '0');
      await first; // served at once
      const leaving = http.get({
        host: '127.0.0.1',
        port,
        path: '/smooth/slow',
        headers: { 'x-n': '1' },
      });
      leaving.on('error', () => undefined);
      await until(() => engine.waits.size === 1, 'request 1 waits');
      leaving.destroy();
      await until(() => engine.waits.size === 0, 'request 1 stops waiting');
      // Its token (due at +1 s) is free again: request 2 gets it, not the one after.
      // (supertest sends a request when it is awaited or then'd)
      const next = request(app.getHttpServer())
        .get('/smooth/slow')
        .set('x-n', '2')
        .then((res) => res);
      await until(() => engine.waits.size === 1, 'request 2 waits');
      clock.advance(1_000);
      expect((await next).status).toBe(200);
      expect(served).toEqual([
        { n: 0, at: START },
        { n: 2, at: START + 1_000 },
      ]);
    });
  });
});

describe('maxDelay: start-up validation', () => {
  it.each([
    [
      { rate: 10, maxDelay: '2 fortnights' },
      `maxDelay must be a positive number of milliseconds or a duration such as '500ms', got "2 fortnights"`,
    ],
    [{ rate: 10, maxDelay: '2h' }, 'maxDelay (7200000 ms) must be at most 3600000 ms (one hour)'],
    [{ rate: 10, maxDelay: 500, shadow: true }, 'maxDelay means nothing on a shadow limit'],
    [
      { rate: () => 10, maxDelay: 500 },
      'maxDelay cannot be combined with a rate or burst function',
    ],
    [{ rate: 10, maxDelay: -5 }, 'maxDelay must be a positive number of milliseconds'],
  ])('%j', async (limit, message) => {
    await expect(
      createApp('express', {
        imports: [RateLimitModule.forRoot({ limits: [limit as never] })],
        controllers: [DelayController],
      }),
    ).rejects.toThrow(message);
  });
});
