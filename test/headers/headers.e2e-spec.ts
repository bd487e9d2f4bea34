import request from 'supertest';
import type { INestApplication, Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import {
  ManualClock,
  RateLimitInterceptor,
  RateLimitModule,
  type RateLimitTypes,
} from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { HeadersController, InterceptedController } from './headers.controller.js';

const RATE_LIMIT_HEADERS = [
  'ratelimit',
  'ratelimit-policy',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

interface Seen {
  status: number;
  headers: Record<string, string | undefined>;
}

describe.each(PLATFORMS)('rate-limit headers (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;

  const boot = async (
    headers: RateLimitTypes.HeadersMode | undefined,
    providers: Provider[] = [],
  ) => {
    clock = new ManualClock(20_000_000);
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ clock, ...(headers === undefined ? {} : { headers }) })],
      controllers: [HeadersController, InterceptedController],
      providers,
    });
  };
  afterEach(() => app?.close());

  /** Status plus every rate-limit header and Retry-After (absent ones omitted). */
  const hit = async (path: string): Promise<Seen & { raw: string[] }> => {
    const res = await request(app.getHttpServer()).get(path);
    const headers: Record<string, string | undefined> = {};
    for (const name of [...RATE_LIMIT_HEADERS, 'retry-after']) {
      if (res.headers[name] !== undefined) headers[name] = res.headers[name];
    }
    const raw = (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders;
    return { status: res.status, headers, raw };
  };
  const seen = async (path: string): Promise<Seen> => {
    const { status, headers } = await hit(path);
    return { status, headers };
  };
  /** How many times a header name appears in the raw response (case-insensitive). */
  const rawCount = (raw: string[], name: string) =>
    raw.filter((entry, i) => i % 2 === 0 && entry.toLowerCase() === name).length;

  describe("headers: 'draft' (the default)", () => {
    beforeEach(() => boot(undefined));

    it('one limit: exact RateLimit-Policy and RateLimit on 200 and 429', async () => {
      const policy = '"default";q=3;w=3';
      expect(await seen('/h/one')).toEqual({
        status: 200,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=2;t=1' },
      });
      expect(await seen('/h/one')).toEqual({
        status: 200,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=1;t=1' },
      });
      expect(await seen('/h/one')).toEqual({
        status: 200,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=0;t=1' },
      });
      expect(await seen('/h/one')).toEqual({
        status: 429,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=0;t=1', 'retry-after': '1' },
      });
      clock.advance(400);
      // 0.4 token: the next one in 0.6 s, rounded up.
      expect(await seen('/h/one')).toEqual({
        status: 429,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=0;t=1', 'retry-after': '1' },
      });
      clock.advance(1100);
      // 1.5 tokens: one taken, 0.5 left.
      expect(await seen('/h/one')).toEqual({
        status: 200,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=0;t=1' },
      });
      clock.advance(500);
      expect(await seen('/h/one')).toEqual({
        status: 200,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=0;t=1' },
      });
      clock.advance(10_000);
      expect(await seen('/h/one')).toEqual({
        status: 200,
        headers: { 'ratelimit-policy': policy, ratelimit: '"default";r=2;t=1' },
      });
    });

    it('two limits: one member each, in declaration order, on 200 and 429', async () => {
      const policy = '"minute";q=5;w=30, "second";q=4;w=2';
      const expected = [
        '"minute";r=4;t=6, "second";r=3;t=1',
        '"minute";r=3;t=6, "second";r=2;t=1',
        '"minute";r=2;t=6, "second";r=1;t=1',
        '"minute";r=1;t=6, "second";r=0;t=1',
      ];
      for (const ratelimit of expected) {
        expect(await seen('/h/two')).toEqual({
          status: 200,
          headers: { 'ratelimit-policy': policy, ratelimit },
        });
      }
      expect(await seen('/h/two')).toEqual({
        status: 429,
        headers: {
          'ratelimit-policy': policy,
          ratelimit: '"minute";r=1;t=6, "second";r=0;t=1',
          'retry-after': '1',
        },
      });
      clock.advance(500);
      expect(await seen('/h/two')).toEqual({
        status: 200,
        headers: { 'ratelimit-policy': policy, ratelimit: '"minute";r=0;t=6, "second";r=0;t=1' },
      });
      clock.advance(1000);
      expect(await seen('/h/two')).toEqual({
        status: 429,
        headers: {
          'ratelimit-policy': policy,
          ratelimit: '"minute";r=0;t=5, "second";r=2;t=1',
          'retry-after': '5',
        },
      });
    });

    it('an admitted request whose handler fails still carries the headers', async () => {
      expect(await seen('/h/throws')).toEqual({
        status: 400,
        headers: { 'ratelimit-policy': '"default";q=3;w=3', ratelimit: '"default";r=2;t=1' },
      });
    });
  });

  describe("headers: 'legacy'", () => {
    beforeEach(() => boot('legacy'));

    it('one limit: X-RateLimit-* on 200 and 429, no draft headers', async () => {
      const legacy = (remaining: number, reset: number) => ({
        'x-ratelimit-limit': '3',
        'x-ratelimit-remaining': String(remaining),
        'x-ratelimit-reset': String(reset),
      });
      expect(await seen('/h/one')).toEqual({ status: 200, headers: legacy(2, 1) });
      expect(await seen('/h/one')).toEqual({ status: 200, headers: legacy(1, 2) });
      expect(await seen('/h/one')).toEqual({ status: 200, headers: legacy(0, 3) });
      expect(await seen('/h/one')).toEqual({
        status: 429,
        headers: { ...legacy(0, 3), 'retry-after': '1' },
      });
      clock.advance(1500);
      // Full again in 2.5 s, rounded up.
      expect(await seen('/h/one')).toEqual({ status: 200, headers: legacy(0, 3) });
      clock.advance(500);
      expect(await seen('/h/one')).toEqual({ status: 200, headers: legacy(0, 3) });
    });

    it('two limits: the most restrictive one (fewest left, then longest to refill)', async () => {
      const legacy = (limit: number, remaining: number, reset: number) => ({
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': String(remaining),
        'x-ratelimit-reset': String(reset),
      });
      // "second" has fewer tokens left.
      expect(await seen('/h/two')).toEqual({ status: 200, headers: legacy(4, 3, 1) });
      await seen('/h/two');
      await seen('/h/two');
      expect(await seen('/h/two')).toEqual({ status: 200, headers: legacy(4, 0, 2) });
      expect(await seen('/h/two')).toEqual({
        status: 429,
        headers: { ...legacy(4, 0, 2), 'retry-after': '1' },
      });
      clock.advance(500);
      // Both empty: "minute" takes 29.5 s to refill, "second" 2 s.
      expect(await seen('/h/two')).toEqual({ status: 200, headers: legacy(5, 0, 30) });
      clock.advance(1000);
      // Denied by "minute" (Retry-After 4.5 s -> 5); "second" has 2 left, "minute" 0.
      expect(await seen('/h/two')).toEqual({
        status: 429,
        headers: { ...legacy(5, 0, 29), 'retry-after': '5' },
      });
    });
  });

  describe("headers: 'both'", () => {
    beforeEach(() => boot('both'));

    it('draft and legacy headers together, on 200 and 429', async () => {
      for (const [remaining, t, reset] of [
        [2, 1, 1],
        [1, 1, 2],
        [0, 1, 3],
      ] as const) {
        expect(await seen('/h/one')).toEqual({
          status: 200,
          headers: {
            'ratelimit-policy': '"default";q=3;w=3',
            ratelimit: `"default";r=${remaining};t=${t}`,
            'x-ratelimit-limit': '3',
            'x-ratelimit-remaining': String(remaining),
            'x-ratelimit-reset': String(reset),
          },
        });
      }
      expect(await seen('/h/one')).toEqual({
        status: 429,
        headers: {
          'ratelimit-policy': '"default";q=3;w=3',
          ratelimit: '"default";r=0;t=1',
          'x-ratelimit-limit': '3',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': '3',
          'retry-after': '1',
        },
      });
    });
  });

  describe('headers: false', () => {
    beforeEach(() => boot(false));

    it('no rate-limit headers on 200; only Retry-After on 429', async () => {
      for (let i = 0; i < 3; i++)
        expect(await seen('/h/one')).toEqual({ status: 200, headers: {} });
      expect(await seen('/h/one')).toEqual({ status: 429, headers: { 'retry-after': '1' } });
      for (let i = 0; i < 4; i++)
        expect(await seen('/h/two')).toEqual({ status: 200, headers: {} });
      expect(await seen('/h/two')).toEqual({ status: 429, headers: { 'retry-after': '1' } });
      expect(await seen('/h/intercepted')).toEqual({ status: 200, headers: {} });
    });
  });

  describe('RateLimitInterceptor bound explicitly', () => {
    const expectOnce = (raw: string[], names: string[]) => {
      for (const name of RATE_LIMIT_HEADERS)
        expect([name, rawCount(raw, name)]).toEqual([name, names.includes(name) ? 1 : 0]);
      expect(rawCount(raw, 'retry-after')).toBeLessThanOrEqual(1);
    };

    it.each([
      ['route-level', '/h/intercepted'],
      ['class-level', '/hi'],
    ])(
      '%s: the same headers as the guard writes, exactly once, on 200 and 429',
      async (_where, path) => {
        await boot(undefined);
        for (const ratelimit of ['"default";r=2;t=1', '"default";r=1;t=1', '"default";r=0;t=1']) {
          const res = await hit(path);
          expect({ status: res.status, headers: res.headers }).toEqual({
            status: 200,
            headers: { 'ratelimit-policy': '"default";q=3;w=3', ratelimit },
          });
          expectOnce(res.raw, ['ratelimit', 'ratelimit-policy']);
        }
        const denied = await hit(path);
        expect({ status: denied.status, headers: denied.headers }).toEqual({
          status: 429,
          headers: {
            'ratelimit-policy': '"default";q=3;w=3',
            ratelimit: '"default";r=0;t=1',
            'retry-after': '1',
          },
        });
        expectOnce(denied.raw, ['ratelimit', 'ratelimit-policy']);
        expect(rawCount(denied.raw, 'retry-after')).toBe(1);
      },
    );

    it('two limits, headers: both: one member per limit, every header once', async () => {
      await boot('both');
      const res = await hit('/h/intercepted-two');
      expect({ status: res.status, headers: res.headers }).toEqual({
        status: 200,
        headers: {
          'ratelimit-policy': '"minute";q=5;w=30, "second";q=4;w=2',
          ratelimit: '"minute";r=4;t=6, "second";r=3;t=1',
          'x-ratelimit-limit': '4',
          'x-ratelimit-remaining': '3',
          'x-ratelimit-reset': '1',
        },
      });
      expectOnce(res.raw, RATE_LIMIT_HEADERS);
    });

    it('also bound globally (APP_INTERCEPTOR): still written exactly once', async () => {
      await boot(undefined, [{ provide: APP_INTERCEPTOR, useExisting: RateLimitInterceptor }]);
      for (const path of ['/h/intercepted', '/h/one']) {
        const res = await hit(path);
        expect({ status: res.status, headers: res.headers }).toEqual({
          status: 200,
          headers: { 'ratelimit-policy': '"default";q=3;w=3', ratelimit: '"default";r=2;t=1' },
        });
        expectOnce(res.raw, ['ratelimit', 'ratelimit-policy']);
      }
    });

    it('an admitted request whose handler fails still carries the headers', async () => {
      await boot(undefined);
      const res = await hit('/h/intercepted-throws');
      expect({ status: res.status, headers: res.headers }).toEqual({
        status: 400,
        headers: { 'ratelimit-policy': '"default";q=3;w=3', ratelimit: '"default";r=2;t=1' },
      });
      expectOnce(res.raw, ['ratelimit', 'ratelimit-policy']);
    });
  });
});
