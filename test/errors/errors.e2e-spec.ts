import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import {
  ManualClock,
  QUOTA_EXCEEDED_TYPE,
  RateLimitModule,
  type RateLimitTypes,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { ErrorsController } from './errors.controller.js';

/** What a client is told: status, content type, body and every rate-limit header. */
interface Told {
  status: number;
  type: string | undefined;
  body: unknown;
  headers: Record<string, string | undefined>;
}

const TOLD_HEADERS = [
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

describe.each(PLATFORMS)(
  '429 responses: error formats and programmatic denials (%s)',
  (platform) => {
    let app: INestApplication;
    let clock: ManualClock;

    const boot = async (options: RateLimitModuleOptions = {}) => {
      clock = new ManualClock(50_000_000);
      app = await createApp(platform, {
        imports: [RateLimitModule.forRoot({ clock, ...options })],
        controllers: [ErrorsController],
      });
    };
    afterEach(() => app?.close());

    const get = async (path: string, caller = 'alice'): Promise<Told> => {
      const res = await request(app.getHttpServer()).get(path).set('x-caller', caller);
      const headers: Record<string, string | undefined> = {};
      for (const name of TOLD_HEADERS)
        if (res.headers[name] !== undefined) headers[name] = res.headers[name];
      return {
        status: res.status,
        type: res.headers['content-type']?.split(';')[0],
        body: res.body,
        headers,
      };
    };
    /** Spend the burst (2) of a path, then the refused request. */
    const refused = async (path: string): Promise<Told> => {
      for (let i = 0; i < 2; i++) expect((await get(path)).status).toBe(200);
      return get(path);
    };

    describe.each<RateLimitTypes.ErrorFormat>(['nest', 'problem+json'])(
      "errorFormat: '%s'",
      (errorFormat) => {
        beforeEach(() => boot({ errorFormat, headers: 'both' }));

        it('RateLimiter.enforce() answers exactly what the guard answers for the same limit: status, body, every header', async () => {
          const fromGuard = await refused('/e/guarded');
          const fromService = await refused('/e/enforced');
          expect(fromGuard.status).toBe(429);
          expect(fromGuard.headers['retry-after']).toBe('1');
          expect(fromGuard.headers['ratelimit']).toBe('"search";r=0;t=1');
          expect(fromService).toEqual(fromGuard);
        });

        it('the body in the chosen format, with its media type', async () => {
          const told = await refused('/e/enforced');
          if (errorFormat === 'nest') {
            expect(told.type).toBe('application/json');
            expect(told.body).toEqual({
              statusCode: 429,
              message: 'Too Many Requests',
              retryAfter: 1,
            });
          } else {
            expect(told.type).toBe('application/problem+json');
            expect(told.body).toEqual({
              type: QUOTA_EXCEEDED_TYPE,
              title: 'Request cannot be satisfied as assigned quota has been exceeded',
              status: 429,
              detail: 'Too Many Requests: retry in 1 second',
              'violated-policies': ['search'],
              retryAfter: 1,
            });
          }
        });

        it('a cost no wait can satisfy: no Retry-After, retryAfter null, the headers still say where the bucket stands', async () => {
          const told = await get('/e/costly');
          expect(told.status).toBe(429);
          expect(told.headers['retry-after']).toBeUndefined();
          expect(told.headers['ratelimit']).toBe('"search";r=2;t=1');
          expect((told.body as { retryAfter: unknown }).retryAfter).toBeNull();
        });
      },
    );

    it('an exception thrown by hand gets its Retry-After (it knows no limits, so no rate-limit headers)', async () => {
      await boot();
      expect(await get('/e/thrown')).toEqual({
        status: 429,
        type: 'application/json',
        body: { statusCode: 429, message: 'Too Many Requests', retryAfter: 7 },
        headers: { 'retry-after': '7' },
      });
    });

    it('an admitted enforce() charges the bucket and writes nothing', async () => {
      await boot();
      const told = await get('/e/enforced');
      expect(told.status).toBe(200);
      expect(told.headers).toEqual({});
      expect(told.body).toMatchObject({ allowed: true, remaining: 1 });
    });
  },
);

describe('errorFormat: start-up validation', () => {
  it.each([['json'], [true], ['problem']])(
    '%p is refused, naming the option',
    async (errorFormat) => {
      await expect(
        createApp('express', {
          imports: [
            RateLimitModule.forRoot({ errorFormat: errorFormat as RateLimitTypes.ErrorFormat }),
          ],
          controllers: [ErrorsController],
        }),
      ).rejects.toThrow(`RateLimitModule: errorFormat must be 'nest' or 'problem+json', got`);
    },
  );
});
