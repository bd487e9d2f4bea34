import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { BasicController } from './basic.controller.js';

describe.each(PLATFORMS)('basic limits (%s)', (platform) => {
  let app: INestApplication;
  const clock = new ManualClock(1_000_000);

  beforeEach(async () => {
    app = await createApp(platform, { imports: [RateLimitModule.forRoot({ clock })], controllers: [BasicController] });
  });
  afterEach(() => app.close());

  it('admits the burst, then answers 429 with an exact Retry-After', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(app.getHttpServer()).get('/basic').expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=3');
      expect(res.headers['ratelimit']).toBe(`"default";r=${2 - i};t=${i === 2 ? 1 : 0}`);
    }
    const denied = await request(app.getHttpServer()).get('/basic').expect(429);
    expect(denied.headers['retry-after']).toBe('1');
    expect(denied.body).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 1 });
    clock.advance(1000);
    await request(app.getHttpServer()).get('/basic').expect(200);
  });
});
