import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { makeStore, STORES, storesOfKind, type StoreFixture } from '../utils/stores.js';
import { GenerationsController, inFlight } from './generations.controller.js';
import { until } from '../utils/time.js';

/**
 * `concurrency: 4`: 20 requests of one key at once, each handler waiting
 * until the test lets it go. Exactly 4 run together; the other 16 are
 * refused at once (429, `Retry-After: 1`), and the headers speak of
 * concurrent requests.
 */
describe.each(STORES)('concurrency: overlap (%s store)', (kind) => {
  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;
    let fixture: StoreFixture;
    let url: string;

    beforeEach(async () => {
      fixture = await makeStore(kind, `overlap-${platform}`);
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ store: fixture.store })],
        controllers: [GenerationsController],
      });
      await app.listen(0, '127.0.0.1');
      url = await app.getUrl();
      url = url.replace('[::1]', '127.0.0.1');
      inFlight.max = 0;
      inFlight.reset();
    });
    afterEach(async () => {
      inFlight.release();
      await app?.close();
      await fixture?.release();
    });

    it('20 at once on concurrency 4: at most 4 in the handler, the rest 429 with Retry-After: 1', async () => {
      const denied: request.Response[] = [];
      const all = Array.from({ length: 20 }, () =>
        request(url)
          .get('/generate')
          .set('x-api-key', 'k1')
          .then((response) => {
            if (response.status === 429) {
              denied.push(response);
              // Every refusal is in: let the four running handlers finish.
              if (denied.length === 16) inFlight.release();
            }
            return response;
          }),
      );
      const responses = await Promise.all(all);
      expect(responses.filter((r) => r.status === 200)).toHaveLength(4);
      expect(denied).toHaveLength(16);
      expect(inFlight.max).toBe(4);
      for (const response of denied) {
        expect(response.headers['retry-after']).toBe('1');
        expect(response.headers['ratelimit-policy']).toBe(
          '"generations";q=4;qu="concurrent-requests"',
        );
        expect(response.headers['ratelimit']).toBe('"generations";r=0');
        expect(response.body).toMatchObject({ statusCode: 429, retryAfter: 1 });
      }
      const remaining = responses
        .filter((r) => r.status === 200)
        .map((r) => r.headers['ratelimit'])
        .sort();
      expect(remaining).toEqual([
        '"generations";r=0',
        '"generations";r=1',
        '"generations";r=2',
        '"generations";r=3',
      ]);
      // Every slot is back: four more at once are all admitted.
      inFlight.reset();
      const again = Array.from({ length: 4 }, () =>
        request(url).get('/generate').set('x-api-key', 'k1'),
      );
      setTimeout(() => inFlight.release(), 200);
      expect((await Promise.all(again)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    });

    it("a route's own guard that refuses the call: the slot comes back with the response", async () => {
      for (let i = 0; i < 3; i++)
        expect((await request(url).get('/forbidden').set('x-api-key', 'g')).status).toBe(403);
    });

    it('another key has its own slots', async () => {
      const busy = Array.from({ length: 4 }, () =>
        request(url).get('/generate').set('x-api-key', 'a'),
      );
      const started = Promise.all(busy);
      await until(() => inFlight.now === 4);
      const other = await request(url)
        .get('/generate')
        .set('x-api-key', 'b')
        .timeout(100)
        .catch((error: { timeout?: number }) => error);
      // Admitted (it is waiting in the handler, hence the client's timeout), not refused.
      expect((other as { timeout?: number }).timeout).toBe(100);
      inFlight.release();
      expect((await started).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    });

    it('with a rate limit: both in the headers; a refused slot gives the rate token back', async () => {
      const first = Array.from({ length: 2 }, () =>
        request(url).get('/both').set('x-api-key', 'r'),
      );
      const running = Promise.all(first);
      await until(() => inFlight.now === 2);
      const refused = await request(url).get('/both').set('x-api-key', 'r');
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['ratelimit-policy']).toBe(
        '"per-minute";q=5;w=3, "generations";q=2;qu="concurrent-requests"',
      );
      expect(refused.headers['ratelimit']).toMatch(/^"per-minute";r=2;t=\d+, "generations";r=0$/);
      inFlight.release();
      const ok = await running;
      expect(ok.map((r) => r.status)).toEqual([200, 200]);
      // 2 tokens spent by the admitted requests, the refused one's given back: r=2 after the next.
      const next = await request(url).get('/both').set('x-api-key', 'r');
      expect(next.status).toBe(200);
      expect(next.headers['ratelimit']).toMatch(/^"per-minute";r=2;t=\d+, "generations";r=1$/);
    });
  });
});

/** TwoTierStore: its Redis store's slots (no local tier for slots). */
describe('concurrency: overlap (two-tier store, express)', () => {
  const makeTwoTier = storesOfKind('two-tier');
  let app: INestApplication;

  afterEach(async () => {
    inFlight.release();
    await app?.close();
  });

  it('20 at once on concurrency 4: 4 admitted, 16 refused', async () => {
    app = await createApp('express', {
      imports: [RateLimitModule.forRoot({ store: makeTwoTier('overlap-two-tier') })],
      controllers: [GenerationsController],
    });
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    inFlight.max = 0;
    inFlight.reset();
    let refused = 0;
    const all = Array.from({ length: 20 }, () =>
      request(url)
        .get('/generate')
        .set('x-api-key', 'tt')
        .then((r) => {
          if (r.status === 429 && ++refused === 16) inFlight.release();
          return r.status;
        }),
    );
    const statuses = await Promise.all(all);
    expect(statuses.filter((status) => status === 200)).toHaveLength(4);
    expect(inFlight.max).toBe(4);
  });
});
