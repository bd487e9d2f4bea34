/**
 * Shadow mode (`shadow: true` per limit, or module-wide), on Express and
 * Fastify, memory and Redis stores: a shadow limit is decided and charged as
 * usual but never denies; its would-be denials are published as
 * 'shadow-denied' and said once per burst in the log, and it is not in the headers.
 */
import request from 'supertest';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { makeStore, STORES, type StoreFixture } from '../utils/stores.js';
import { ShadowController } from './shadow.controller.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

interface Seen {
  readonly result: string;
  readonly limits: readonly string[];
}

describe.each(STORES)('shadow mode (%s store)', (storeKind) => {
  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication | undefined;
    let fixture: StoreFixture;
    let seen: Seen[];
    const listener = (event: unknown) =>
      seen.push({ result: (event as Seen).result, limits: (event as Seen).limits });
    const logs = silenceRateLimitLogs();

    const boot = async (options: RateLimitModuleOptions = {}) => {
      fixture = await makeStore(storeKind, `shadow-${platform}`);
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            clock: new ManualClock(1_700_000_000_000),
            store: fixture.store,
            ...options,
          }),
        ],
        controllers: [ShadowController],
      });
    };
    beforeEach(() => {
      seen = [];
      subscribe('nestjs-holdup:decision', listener);
    });
    afterEach(async () => {
      unsubscribe('nestjs-holdup:decision', listener);
      await app?.close();
      app = undefined;
      await fixture?.release();
    });
    const get = (path: string) => request(app!.getHttpServer()).get(path);
    /** Shadow decisions are not awaited by the request: wait until they have all been published. */
    const shadowDenials = async (expected: number) => {
      for (
        let i = 0;
        i < 200 && seen.filter(({ result }) => result === 'shadow-denied').length < expected;
        i++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return seen.filter(({ result }) => result === 'shadow-denied');
    };
    const warnings = (containing: string) =>
      logs.warn.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes(containing));

    it('a shadow limit never denies, is not in the headers, and its would-be denials are counted and said once per burst', async () => {
      await boot();
      for (let i = 0; i < 5; i++) {
        const res = await get('/shadow/only');
        expect([
          res.status,
          res.headers['ratelimit'],
          res.headers['ratelimit-policy'],
          res.headers['retry-after'],
        ]).toEqual([200, undefined, undefined, undefined]);
      }
      expect(await shadowDenials(3)).toEqual(
        [1, 2, 3].map(() => ({ result: 'shadow-denied', limits: ['candidate'] })),
      );
      expect(warnings('(shadow)')).toEqual([
        expect.stringContaining(
          'limit "candidate" (shadow): would have denied a request; admitted.',
        ),
      ]);
      await app!.close();
      app = undefined;
      expect(warnings('(shadow)')).toEqual([
        expect.stringContaining('would have denied a request'),
        expect.stringContaining(
          'limit "candidate" (shadow): 3 request(s) would have been denied in the last burst.',
        ),
      ]);
    });

    it('beside an enforced limit: the enforced one decides and alone is in the headers; the shadow one is charged only for admitted requests', async () => {
      await boot();
      for (const r of [2, 1, 0]) {
        const res = await get('/shadow/beside');
        expect([res.status, res.headers['ratelimit'], res.headers['ratelimit-policy']]).toEqual([
          200,
          `"current";r=${r};t=60`,
          '"current";q=3;w=180',
        ]);
      }
      expect((await get('/shadow/beside')).status).toBe(429); // denied by "current": the shadow limit is not asked
      expect(await shadowDenials(2)).toEqual([
        { result: 'shadow-denied', limits: ['stricter'] },
        { result: 'shadow-denied', limits: ['stricter'] },
      ]);
    });

    it('module-wide shadow: every limit shadows, except one that says shadow: false', async () => {
      await boot({ shadow: true });
      for (let i = 0; i < 3; i++) expect((await get('/shadow/beside')).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await get('/shadow/only')).status).toBe(200);
      expect((await get('/shadow/enforced')).status).toBe(200);
      expect((await get('/shadow/enforced')).status).toBe(429);
    });
  });
});

describe('shadow mode: start-up validation', () => {
  it.each([[{ shadow: 'yes' }, 'RateLimitModule: shadow must be a boolean, got "yes"']])(
    'module %j',
    async (options, message) => {
      await expect(
        createApp('express', {
          imports: [RateLimitModule.forRoot(options as unknown as RateLimitModuleOptions)],
          controllers: [ShadowController],
        }),
      ).rejects.toThrow(message);
    },
  );

  it('shadow with adaptive or charge is refused, naming the limit', async () => {
    const options = {
      limits: [{ name: 'mixed', rate: 10, shadow: true, charge: 'failures' as const }],
    };
    await expect(
      createApp('express', {
        imports: [RateLimitModule.forRoot(options)],
        controllers: [ShadowController],
      }),
    ).rejects.toThrow(`limit "mixed": shadow cannot be combined with charge: 'failures'`);
  });
});
