import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import {
  ManualClock,
  RateLimiter,
  RateLimitModule,
  RateLimitStoreError,
  type RateLimitStore,
} from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';
import { AuthController, JOBS, JobRunner, LOGIN } from './service.fixtures.js';

describe.each(PLATFORMS)('RateLimiter service (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;
  let jobs: JobRunner;

  beforeEach(async () => {
    clock = new ManualClock(50_000_000);
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ clock })],
      controllers: [AuthController],
      providers: [JobRunner],
    });
    jobs = app.get(JobRunner);
  });
  afterEach(() => app.close());

  const http = () => request(app.getHttpServer());
  const login = (email: string) => http().post(`/auth/login?email=${encodeURIComponent(email)}`);
  const attempts = async (email: string) =>
    (
      await http()
        .get(`/auth/attempts?email=${encodeURIComponent(email)}`)
        .expect(200)
    ).body;

  describe('consume / peek / reset from a provider', () => {
    const logs = silenceRateLimitLogs();

    it('consume returns exact decisions, and a denied consume charges nothing', async () => {
      expect(await jobs.tryRun('acme')).toEqual({
        allowed: true,
        remaining: 2,
        retryAfterMs: 0,
        resetMs: 1000,
      });
      expect(await jobs.tryRun('acme')).toEqual({
        allowed: true,
        remaining: 1,
        retryAfterMs: 0,
        resetMs: 2000,
      });
      expect(await jobs.tryRun('acme')).toEqual({
        allowed: true,
        remaining: 0,
        retryAfterMs: 0,
        resetMs: 3000,
      });
      const denied = {
        allowed: false,
        remaining: 0,
        retryAfterMs: 1000,
        resetMs: 3000,
        reason: 'limit',
      };
      expect(await jobs.tryRun('acme')).toEqual(denied);
      expect(await jobs.tryRun('acme')).toEqual(denied);
      clock.advance(250);
      expect(await jobs.tryRun('acme')).toEqual({ ...denied, retryAfterMs: 750, resetMs: 2750 });
      // Another key is another bucket.
      expect(await jobs.tryRun('globex')).toEqual({
        allowed: true,
        remaining: 2,
        retryAfterMs: 0,
        resetMs: 1000,
      });
    });

    it('consume with a cost, and a cost above the burst', async () => {
      expect(await jobs.tryRun('acme', 2)).toEqual({
        allowed: true,
        remaining: 1,
        retryAfterMs: 0,
        resetMs: 2000,
      });
      expect(await jobs.tryRun('acme', 2)).toEqual({
        allowed: false,
        remaining: 1,
        retryAfterMs: 1000,
        resetMs: 2000,
        reason: 'limit',
      });
      expect(await jobs.tryRun('acme', 4)).toEqual({
        allowed: false,
        remaining: 1,
        retryAfterMs: Number.POSITIVE_INFINITY,
        resetMs: 2000,
        reason: 'cost-exceeds-burst',
      });
      expect(await jobs.tryRun('acme', 1)).toEqual({
        allowed: true,
        remaining: 0,
        retryAfterMs: 0,
        resetMs: 3000,
      });
    });

    it('peek reports without charging; reset refills', async () => {
      const limiter = app.get(RateLimiter);
      expect(await limiter.peek('acme', JOBS)).toEqual({
        allowed: true,
        remaining: 3,
        retryAfterMs: 0,
        resetMs: 0,
      });
      await jobs.tryRun('acme', 3);
      expect(await limiter.peek('acme', JOBS)).toEqual({
        allowed: true,
        remaining: 0,
        retryAfterMs: 0,
        resetMs: 3000,
      });
      expect(await limiter.peek('acme', JOBS)).toEqual({
        allowed: true,
        remaining: 0,
        retryAfterMs: 0,
        resetMs: 3000,
      });
      clock.advance(1500);
      expect(await limiter.peek('acme', JOBS)).toEqual({
        allowed: true,
        remaining: 1,
        retryAfterMs: 0,
        resetMs: 1500,
      });
      await limiter.reset('acme', JOBS);
      expect(await limiter.peek('acme', JOBS)).toEqual({
        allowed: true,
        remaining: 3,
        retryAfterMs: 0,
        resetMs: 0,
      });
      expect(await jobs.tryRun('acme')).toEqual({
        allowed: true,
        remaining: 2,
        retryAfterMs: 0,
        resetMs: 1000,
      });
    });

    it('consume rejects an invalid limit or cost with a TypeError naming it', async () => {
      const limiter = app.get(RateLimiter);
      await expect(limiter.consume('acme', { name: 'jobs', rate: 0 })).rejects.toThrow(
        new TypeError(
          `RateLimiter: limit "jobs": rate must be a positive number of tokens per second or a string like '10/s' or '100/15min', got 0`,
        ),
      );
      await expect(limiter.consume('acme', JOBS, { cost: 0 })).rejects.toThrow(
        new TypeError('RateLimiter.consume: cost must be a positive number, got 0'),
      );
    });

    it('peek and reset reject an invalid limit with a TypeError naming it, not as a store failure', async () => {
      const limiter = app.get(RateLimiter);
      for (const call of [
        () => limiter.peek('acme', { rate: 1, burst: 0 }),
        () => limiter.reset('acme', { rate: 1, burst: 0 }),
      ]) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toBe(
          'RateLimiter: limit "default": burst must be a finite number >= 1, got 0',
        );
      }
      // A caller's mistake is not reported as the store being down.
      expect(logs.error).not.toHaveBeenCalled();
    });
  });

  describe("the bucket of a route limit with scope: 'shared' and a key function", () => {
    it('reset(key, { name, rate }) gives the route its tokens back, for that key only', async () => {
      const policy = '"login";q=2;w=120';
      const first = await login('alice@example.com').expect(201);
      expect(first.headers['ratelimit-policy']).toBe(policy);
      expect(first.headers['ratelimit']).toBe('"login";r=1;t=60');
      await login('alice@example.com').expect(201);
      await login('alice@example.com').expect(429);
      await login('bob@example.com').expect(201);
      await login('bob@example.com').expect(201);
      await login('bob@example.com').expect(429);

      // The service sees the route's bucket...
      expect(await attempts('alice@example.com')).toEqual({ remaining: 0, resetMs: 120_000 });
      // ...and resets it.
      expect(
        (await http().post('/auth/unlock?email=alice%40example.com').expect(201)).body,
      ).toEqual({ unlocked: 'alice@example.com' });
      expect(await attempts('alice@example.com')).toEqual({ remaining: 2, resetMs: 0 });
      const again = await login('alice@example.com').expect(201);
      expect(again.headers['ratelimit']).toBe('"login";r=1;t=60');
      // Bob's bucket was not touched.
      await login('bob@example.com').expect(429);
    });

    it('consume(key, limit) charges the route bucket, and the route charges what peek sees', async () => {
      const charged = await http().post('/auth/charge?email=carol%40example.com').expect(201);
      expect(charged.body).toEqual({
        allowed: true,
        remaining: 1,
        retryAfterMs: 0,
        resetMs: 60_000,
      });
      const res = await login('carol@example.com').expect(201);
      expect(res.headers['ratelimit']).toBe('"login";r=0;t=60');
      expect(await attempts('carol@example.com')).toEqual({ remaining: 0, resetMs: 120_000 });
      await login('carol@example.com').expect(429);
    });

    it('keys that are not plain ASCII (digested) reach the same bucket', async () => {
      const email = 'zoë+\u{1F600}@exämple.com';
      await login(email).expect(201);
      await login(email).expect(201);
      await login(email).expect(429);
      expect(await attempts(email)).toEqual({ remaining: 0, resetMs: 120_000 });
      await app.get(RateLimiter).reset(email, LOGIN);
      await login(email).expect(201);
    });
  });
});

describe('RateLimiter service with a failing store', () => {
  it('consume, peek and reset reject with RateLimitStoreError carrying the cause', async () => {
    const cause = new Error('connection refused');
    const store: RateLimitStore = {
      consume: () => Promise.reject(cause),
      peek: () => {
        throw cause;
      },
      refund: () => Promise.reject(cause),
      reset: () => Promise.reject(cause),
      close: () => undefined,
    };
    const app = await createApp('express', { imports: [RateLimitModule.forRoot({ store })] });
    try {
      const limiter = app.get(RateLimiter);
      for (const call of [
        () => limiter.consume('k', JOBS),
        () => limiter.peek('k', JOBS),
        () => limiter.reset('k', JOBS),
      ]) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(RateLimitStoreError);
        expect((error as RateLimitStoreError).cause).toBe(cause);
      }
    } finally {
      await app.close();
    }
  });
});
