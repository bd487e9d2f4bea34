/**
 * A string rate means what it says (issue 25): with no `burst`, `'100/min'`
 * admits 100 at once, then refills at 100 per minute; the 101st is denied with
 * a `Retry-After` for one token (0.6 s, rounded up to 1 s). A numeric rate
 * keeps one second's worth. On Express and Fastify, on a ManualClock.
 */
import request from 'supertest';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ManualClock, RateLimit, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';

@Controller('default-burst')
class DefaultBurstController {
  @RateLimit({ name: 'minute', rate: '100/min' })
  @Get('minute')
  minute() {
    return { ok: true };
  }

  @RateLimit({ name: 'quarter', rate: '100/15min' })
  @Get('quarter')
  quarter() {
    return { ok: true };
  }

  @RateLimit({ name: 'numeric', rate: 2.5 })
  @Get('numeric')
  numeric() {
    return { ok: true };
  }
}

describe.each(PLATFORMS)('a string rate with no burst holds its count (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock(1_700_000_000_000);
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ clock })],
      controllers: [DefaultBurstController],
    });
  });
  afterEach(() => app.close());
  const get = (path: string) => request(app.getHttpServer()).get(path);
  const seen = (res: request.Response) => [
    res.status,
    res.headers['retry-after'],
    res.headers['ratelimit-policy'],
    res.headers['ratelimit'],
  ];

  it("'100/min' admits 100 at once; the 101st gets 429 with Retry-After for one token", async () => {
    expect(seen(await get('/default-burst/minute'))).toEqual([
      200,
      undefined,
      '"minute";q=100;w=60',
      '"minute";r=99;t=1',
    ]);
    for (let i = 2; i <= 100; i++) {
      const res = await get('/default-burst/minute');
      expect([res.status, res.headers['ratelimit']]).toEqual([200, `"minute";r=${100 - i};t=1`]);
    }
    const denied = await get('/default-burst/minute');
    expect(seen(denied)).toEqual([429, '1', '"minute";q=100;w=60', '"minute";r=0;t=1']);
    // One token is 600 ms away: not there at 599 ms, there at 600 ms, and only one.
    clock.advance(599);
    expect((await get('/default-burst/minute')).status).toBe(429);
    clock.advance(1);
    expect(seen(await get('/default-burst/minute'))).toEqual([
      200,
      undefined,
      '"minute";q=100;w=60',
      '"minute";r=0;t=1',
    ]);
    expect((await get('/default-burst/minute')).status).toBe(429);
    // Refilled at 100 per minute: a minute later, 100 again at once.
    clock.advance(60_000);
    for (let i = 1; i <= 100; i++) expect((await get('/default-burst/minute')).status).toBe(200);
    expect((await get('/default-burst/minute')).status).toBe(429);
  });

  it("'100/15min' holds 100 and refills one every 9 s", async () => {
    for (let i = 1; i <= 100; i++) expect((await get('/default-burst/quarter')).status).toBe(200);
    const denied = await get('/default-burst/quarter');
    expect(seen(denied)).toEqual([429, '9', '"quarter";q=100;w=900', '"quarter";r=0;t=9']);
    clock.advance(9_000);
    expect((await get('/default-burst/quarter')).status).toBe(200);
    expect((await get('/default-burst/quarter')).status).toBe(429);
  });

  it('a numeric rate keeps one second of it (2.5/s holds 3)', async () => {
    for (let i = 1; i <= 3; i++) expect((await get('/default-burst/numeric')).status).toBe(200);
    expect(seen(await get('/default-burst/numeric'))).toEqual([
      429,
      '1',
      '"numeric";q=3;w=2',
      '"numeric";r=0;t=1',
    ]);
  });
});
