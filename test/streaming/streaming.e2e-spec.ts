import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { StreamingController } from './streaming.controller.js';

/**
 * Streamed responses (server-sent events, `StreamableFile`) send their
 * headers with the first byte: the limiter's must be there already, and a
 * denial must still be a plain 429.
 */
describe.each(PLATFORMS)('streamed responses (%s)', (platform) => {
  let app: INestApplication;

  beforeEach(async () => {
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ clock: new ManualClock(9_000_000) })],
      controllers: [StreamingController],
    });
  });
  afterEach(() => app?.close());

  const get = (path: string) =>
    request(app.getHttpServer())
      .get(path)
      .buffer(true)
      .parse((res, done) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => done(null, body));
      });

  it.each(['/s/events', '/s/file', '/s/adaptive-file'])(
    '%s: headers before the first byte on every admitted stream, then a 429',
    async (path) => {
      for (const remaining of [1, 0]) {
        const res = await get(path);
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit']).toMatch(new RegExp(`^"default";r=${remaining};t=\\d+$`));
        expect(res.headers['ratelimit-policy']).toBe('"default";q=2;w=2');
        expect(String(res.body).length).toBeGreaterThan(0);
      }
      const denied = await get(path);
      expect(denied.status).toBe(429);
      expect(denied.headers['retry-after']).toBe('1');
      expect(JSON.parse(String(denied.body))).toEqual({
        statusCode: 429,
        message: 'Too Many Requests',
        retryAfter: 1,
      });
    },
  );

  it('server-sent events arrive whole after the headers', async () => {
    const res = await get('/s/events');
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(String(res.body)).toContain('data: {"i":2}');
  });
});
