/**
 * The terminus indicator on Express and Fastify with stores that need no
 * Redis: the memory store is always up; a custom store without health() is
 * reported up, one whose health() rejects (breaking the contract) down.
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { MemoryStore, type RateLimitStore } from 'nestjs-holdup';
import { PLATFORMS } from '../utils/create-app.js';
import { healthApp } from './health.fixtures.js';

/** A custom store: a MemoryStore under another name, with or without health(). */
function customStore(health?: () => Promise<never>): RateLimitStore {
  const memory = new MemoryStore();
  return {
    consume: (r) => memory.consume(r),
    peek: (r) => memory.peek(r),
    refund: (r) => memory.refund(r),
    reset: (r) => memory.reset(r),
    close: () => memory.close(),
    ...(health ? { health } : {}),
  };
}

describe.each(PLATFORMS)('RateLimitHealthIndicator without Redis (%s)', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('a memory store is up', async () => {
    app = await healthApp(platform, {});
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      details: { 'rate-limit': { status: 'up', store: 'memory' } },
    });
  });

  it('a custom store without health() is up', async () => {
    app = await healthApp(platform, { store: customStore() });
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body.details['rate-limit']).toEqual({ status: 'up', store: 'custom' });
  });

  it('a custom store whose health() rejects is down (503), with why', async () => {
    app = await healthApp(platform, {
      store: customStore(() => Promise.reject(new Error('backend unreachable'))),
    });
    const res = await request(app.getHttpServer()).get('/health').expect(503);
    expect(res.body).toMatchObject({
      status: 'error',
      details: { 'rate-limit': { status: 'down', error: 'backend unreachable' } },
    });
  });
});
