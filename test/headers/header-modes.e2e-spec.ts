import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { parseDictionary, parseItem, parseList } from 'structured-headers';
import { ManualClock, RateLimitModule, type RateLimitTypes } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { HeaderModesController } from './header-modes.controller.js';

/** Every header name any mode writes (lower case, as Node reports them). */
const ALL = [
  'ratelimit-policy',
  'ratelimit',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

interface Hit {
  readonly status: number;
  readonly headers: Record<string, string>;
}

/** draft -11 `RateLimit-Policy` / `RateLimit`, parsed as the draft defines them: a List of Strings with parameters. */
function parseDraftList(value: string | undefined): Record<string, Record<string, unknown>> {
  expect(value).toBeDefined();
  const members: Record<string, Record<string, unknown>> = {};
  for (const [item, params] of parseList(value!)) {
    expect(typeof item).toBe('string'); // "MUST be a String"
    members[item as string] = Object.fromEntries(params);
  }
  return members;
}

/** An Integer field (draft -06 and the X- headers carry bare numbers). */
const integer = (value: string | undefined): number => {
  const [item, params] = parseItem(value!);
  expect(Number.isInteger(item)).toBe(true);
  expect(params.size).toBe(0);
  return item as number;
};

describe.each(PLATFORMS)(
  'header modes, checked with a structured-field parser (%s)',
  (platform) => {
    let app: INestApplication;
    let clock: ManualClock;

    const boot = async (headers: RateLimitTypes.HeadersMode) => {
      clock = new ManualClock(1_700_000_000_000);
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ clock, headers })],
        controllers: [HeaderModesController],
      });
    };
    afterEach(() => app?.close());

    const hit = async (path: string): Promise<Hit> => {
      const res = await request(app.getHttpServer()).get(`/modes/${path}`);
      const headers: Record<string, string> = {};
      for (const name of [...ALL, 'retry-after'])
        if (res.headers[name] !== undefined) headers[name] = res.headers[name];
      return { status: res.status, headers };
    };
    const names = (hit: Hit) =>
      Object.keys(hit.headers)
        .filter((name) => name !== 'retry-after')
        .sort();
    const draft = (hit: Hit) => ({
      status: hit.status,
      policy: parseDraftList(hit.headers['ratelimit-policy']),
      limit: parseDraftList(hit.headers['ratelimit']),
    });

    describe("'draft' (draft-ietf-httpapi-ratelimit-headers-11)", () => {
      beforeEach(() => boot('draft'));

      it('q is the burst, w the refill time; r the tokens left, t the seconds until one more token, also while tokens are left', async () => {
        const policy = { default: { q: 3, w: 3 } };
        expect(draft(await hit('one'))).toEqual({
          status: 200,
          policy,
          limit: { default: { r: 2, t: 1 } },
        });
        expect(draft(await hit('one'))).toEqual({
          status: 200,
          policy,
          limit: { default: { r: 1, t: 1 } },
        });
        expect(draft(await hit('one'))).toEqual({
          status: 200,
          policy,
          limit: { default: { r: 0, t: 1 } },
        });
        const denied = await hit('one');
        expect(draft(denied)).toEqual({ status: 429, policy, limit: { default: { r: 0, t: 1 } } });
        expect(denied.headers['retry-after']).toBe('1');
        clock.advance(1000);
        expect(draft(await hit('one'))).toEqual({
          status: 200,
          policy,
          limit: { default: { r: 0, t: 1 } },
        });
      });

      it('a slow bucket: t counts down with the clock while a token is still left, and Retry-After is never before t', async () => {
        const policy = { slow: { q: 2, w: 20 } };
        expect(draft(await hit('slow'))).toEqual({
          status: 200,
          policy,
          limit: { slow: { r: 1, t: 10 } },
        });
        clock.advance(3000); // 1.3 tokens
        expect(draft(await hit('slow'))).toEqual({
          status: 200,
          policy,
          limit: { slow: { r: 0, t: 7 } },
        });
        const denied = await hit('slow');
        expect(draft(denied)).toEqual({ status: 429, policy, limit: { slow: { r: 0, t: 7 } } });
        expect(integer(denied.headers['retry-after'])).toBeGreaterThanOrEqual(7);
        clock.advance(6999);
        expect((await hit('slow')).status).toBe(429);
        clock.advance(1);
        expect(draft(await hit('slow'))).toEqual({
          status: 200,
          policy,
          limit: { slow: { r: 0, t: 10 } },
        });
      });

      it('a cost of 2: r drops by 2; a denial for want of the second token says t 1 and Retry-After 1', async () => {
        expect(draft(await hit('heavy')).limit).toEqual({ heavy: { r: 3, t: 1 } });
        expect(draft(await hit('heavy')).limit).toEqual({ heavy: { r: 1, t: 1 } });
        const denied = await hit('heavy');
        expect(draft(denied)).toEqual({
          status: 429,
          policy: { heavy: { q: 5, w: 5 } },
          limit: { heavy: { r: 1, t: 1 } },
        });
        expect(denied.headers['retry-after']).toBe('1');
      });

      it('two limits: one member each, in declaration order', async () => {
        const first = await hit('two');
        expect(parseList(first.headers['ratelimit']!).map(([name]) => name)).toEqual([
          'minute',
          'second',
        ]);
        expect(draft(first)).toEqual({
          status: 200,
          policy: { minute: { q: 5, w: 30 }, second: { q: 4, w: 2 } },
          limit: { minute: { r: 4, t: 6 }, second: { r: 3, t: 1 } },
        });
        expect(names(first)).toEqual(['ratelimit', 'ratelimit-policy']);
      });

      it('a client that spends r and, whenever some r is 0, waits the longest such t is never denied (one and two limits)', async () => {
        for (const path of ['one', 'slow', 'two']) {
          let waited = 0;
          for (let i = 0; i < 15; i++) {
            const res = await hit(path);
            expect([path, i, res.status]).toEqual([path, i, 200]);
            let waitSeconds = 0;
            for (const { r, t } of Object.values(draft(res).limit) as { r: number; t: number }[])
              if (r === 0) waitSeconds = Math.max(waitSeconds, t);
            if (waitSeconds > 0) {
              clock.advance(waitSeconds * 1000);
              waited++;
            }
          }
          expect(waited).toBeGreaterThan(2);
        }
      });
    });

    describe("'draft-7' (express-rate-limit's combined field)", () => {
      beforeEach(() => boot('draft-7'));

      it('RateLimit-Policy: a List of Integers with w; RateLimit: a Dictionary limit/remaining/reset of the most restrictive limit', async () => {
        const first = await hit('two');
        expect(names(first)).toEqual(['ratelimit', 'ratelimit-policy']);
        expect(
          parseList(first.headers['ratelimit-policy']!).map(([q, params]) => [q, params.get('w')]),
        ).toEqual([
          [5, 30],
          [4, 2],
        ]);
        const fields = (hit: Hit) =>
          Object.fromEntries(
            [...parseDictionary(hit.headers['ratelimit']!)].map(([key, [value]]) => [key, value]),
          );
        expect(fields(first)).toEqual({ limit: 4, remaining: 3, reset: 1 }); // "second": fewest left
        for (let i = 0; i < 3; i++) await hit('two');
        const denied = await hit('two');
        expect(denied.status).toBe(429);
        // reset: until the bucket is full again (4 tokens at 2/s), never earlier than the quota is back.
        expect(fields(denied)).toEqual({ limit: 4, remaining: 0, reset: 2 });
        expect(denied.headers['retry-after']).toBe('1');
      });
    });

    describe("'draft-6' (express-rate-limit's separate fields)", () => {
      beforeEach(() => boot('draft-6'));

      it('RateLimit-Policy plus RateLimit-Limit / -Remaining / -Reset as Integers, for the most restrictive limit', async () => {
        const first = await hit('one');
        expect(names(first)).toEqual([
          'ratelimit-limit',
          'ratelimit-policy',
          'ratelimit-remaining',
          'ratelimit-reset',
        ]);
        expect(
          parseList(first.headers['ratelimit-policy']!).map(([q, params]) => [
            q,
            Object.fromEntries(params),
          ]),
        ).toEqual([[3, { w: 3 }]]);
        expect([
          integer(first.headers['ratelimit-limit']),
          integer(first.headers['ratelimit-remaining']),
          integer(first.headers['ratelimit-reset']),
        ]).toEqual([3, 2, 1]);
        await hit('one');
        await hit('one');
        const denied = await hit('one');
        expect(denied.status).toBe(429);
        expect([
          integer(denied.headers['ratelimit-remaining']),
          integer(denied.headers['ratelimit-reset']),
          integer(denied.headers['retry-after']),
        ]).toEqual([0, 3, 1]);
      });
    });

    describe("'legacy', 'both' and false", () => {
      it("'legacy': X-RateLimit-Limit / -Remaining / -Reset (seconds until full) only", async () => {
        await boot('legacy');
        const first = await hit('slow');
        expect(names(first)).toEqual([
          'x-ratelimit-limit',
          'x-ratelimit-remaining',
          'x-ratelimit-reset',
        ]);
        expect([
          integer(first.headers['x-ratelimit-limit']),
          integer(first.headers['x-ratelimit-remaining']),
          integer(first.headers['x-ratelimit-reset']),
        ]).toEqual([2, 1, 10]);
      });

      it("'both': the draft -11 fields and the X- fields, nothing else", async () => {
        await boot('both');
        const first = await hit('slow');
        expect(names(first)).toEqual([
          'ratelimit',
          'ratelimit-policy',
          'x-ratelimit-limit',
          'x-ratelimit-remaining',
          'x-ratelimit-reset',
        ]);
        expect(draft(first).limit).toEqual({ slow: { r: 1, t: 10 } });
      });

      it('false: no rate-limit field, only Retry-After on a denial', async () => {
        await boot(false);
        for (let i = 0; i < 3; i++) expect(await hit('one')).toEqual({ status: 200, headers: {} });
        expect(await hit('one')).toEqual({ status: 429, headers: { 'retry-after': '1' } });
      });
    });
  },
);
