import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule, type RateLimitModuleOptions } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import {
  ClassLimitedController,
  OtherScopedController,
  PlainController,
  ScopedController,
  SkipOneController,
  SkippedController,
  StackedSkipController,
} from './merging.controller.js';
import { UsersController as UsersV1Controller } from './same-name-a.controller.js';
import { UsersController as UsersV2Controller } from './same-name-b.controller.js';

const T0 = 1_000_000;

describe.each(PLATFORMS)('limit merging (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;

  const boot = async (
    options: RateLimitModuleOptions,
    controllers: NonNullable<Parameters<typeof createApp>[1]['controllers']>,
  ) => {
    clock = new ManualClock(T0);
    app = await createApp(platform, {
      imports: [RateLimitModule.forRoot({ ...options, clock })],
      controllers,
    });
  };
  const get = (path: string) => request(app.getHttpServer()).get(path);

  /** Sends one request and checks status and both draft headers exactly. */
  const expectHit = async (path: string, status: number, policy: string, rateLimit: string) => {
    const res = await get(path);
    expect({
      status: res.status,
      policy: res.headers['ratelimit-policy'],
      rateLimit: res.headers['ratelimit'],
    }).toEqual({
      status,
      policy,
      rateLimit,
    });
    return res;
  };
  const expectUnlimited = async (path: string, times: number) => {
    for (let i = 0; i < times; i++) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBeUndefined();
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(res.headers['retry-after']).toBeUndefined();
    }
  };

  afterEach(() => app?.close());

  describe('class and method limits (no module-wide limits)', () => {
    beforeEach(() =>
      boot({}, [
        ClassLimitedController,
        SkippedController,
        ScopedController,
        OtherScopedController,
        StackedSkipController,
        UsersV1Controller,
        UsersV2Controller,
      ]),
    );

    it('a method without @RateLimit inherits the class limit', async () => {
      const policy = '"default";q=3;w=180';
      await expectHit('/classy/inherit', 200, policy, '"default";r=2;t=60');
      await expectHit('/classy/inherit', 200, policy, '"default";r=1;t=60');
      await expectHit('/classy/inherit', 200, policy, '"default";r=0;t=60');
      const denied = await expectHit('/classy/inherit', 429, policy, '"default";r=0;t=60');
      expect(denied.headers['retry-after']).toBe('60');
    });

    it('a method limit with the class limit name replaces it (policy and bucket)', async () => {
      const policy = '"default";q=5;w=300';
      for (let i = 4; i >= 0; i--) {
        await expectHit('/classy/replace', 200, policy, `"default";r=${i};t=60`);
      }
      const denied = await expectHit('/classy/replace', 429, policy, '"default";r=0;t=60');
      expect(denied.headers['retry-after']).toBe('60');
      // The class limit's own bucket on another route was never touched.
      await expectHit('/classy/inherit', 200, '"default";q=3;w=180', '"default";r=2;t=60');
    });

    it('a method limit with another name adds to the class limit; each keeps its own bucket', async () => {
      const policy = '"default";q=3;w=180, "extra";q=2;w=2';
      await expectHit('/classy/add', 200, policy, '"default";r=2;t=60, "extra";r=1;t=1');
      await expectHit('/classy/add', 200, policy, '"default";r=1;t=60, "extra";r=0;t=1');
      // Denied by "extra": "default" is not charged.
      const deniedByExtra = await expectHit(
        '/classy/add',
        429,
        policy,
        '"default";r=1;t=60, "extra";r=0;t=1',
      );
      expect(deniedByExtra.headers['retry-after']).toBe('1');
      clock.advance(1000);
      await expectHit('/classy/add', 200, policy, '"default";r=0;t=59, "extra";r=0;t=1');
      clock.advance(1000);
      // Denied by "default" (the class limit) although "extra" has a token.
      const deniedByClass = await expectHit(
        '/classy/add',
        429,
        policy,
        '"default";r=0;t=58, "extra";r=1;t=1',
      );
      expect(deniedByClass.headers['retry-after']).toBe('58');
    });

    it('@SkipRateLimit() on a method skips every limit', async () => {
      await expectUnlimited('/classy/skip-all', 8);
    });

    it("@SkipRateLimit('name') on a method skips only that limit (class or method level)", async () => {
      await expectHit('/classy/skip-class-limit', 200, '"extra";q=2;w=2', '"extra";r=1;t=1');
      await expectHit('/classy/skip-class-limit', 200, '"extra";q=2;w=2', '"extra";r=0;t=1');
      await expectHit('/classy/skip-class-limit', 429, '"extra";q=2;w=2', '"extra";r=0;t=1');
    });

    it("a method's own @RateLimit() applies under its own @SkipRateLimit() (everything inherited skipped)", async () => {
      await expectHit('/classy/only-own', 200, '"own";q=2;w=2', '"own";r=1;t=1');
      await expectHit('/classy/only-own', 200, '"own";q=2;w=2', '"own";r=0;t=1');
      await expectHit('/classy/only-own', 429, '"own";q=2;w=2', '"own";r=0;t=1');
    });

    it("@SkipRateLimit('a', 'b') skips both names", async () => {
      await expectHit('/stacked-skip/one-call', 200, '"c";q=5;w=300', '"c";r=4;t=60');
    });

    it("stacked @SkipRateLimit('a') @SkipRateLimit('b') skip both names too", async () => {
      await expectHit('/stacked-skip', 200, '"c";q=5;w=300', '"c";r=4;t=60');
      await expectHit('/stacked-skip', 200, '"c";q=5;w=300', '"c";r=3;t=60');
    });

    it("@SkipRateLimit() on a class: nothing inherited applies, but a method's explicit @RateLimit() does", async () => {
      await expectUnlimited('/skipped', 5);
      await expectHit('/skipped/limited', 200, '"own";q=1;w=60', '"own";r=0;t=60');
      await expectHit('/skipped/limited', 429, '"own";q=1;w=60', '"own";r=0;t=60');
    });

    it('two routes with the same limit name do not share a bucket (route scope)', async () => {
      const policy = '"pool";q=2;w=120';
      await expectHit('/scoped/a', 200, policy, '"pool";r=1;t=60');
      await expectHit('/scoped/a', 200, policy, '"pool";r=0;t=60');
      await expectHit('/scoped/a', 429, policy, '"pool";r=0;t=60');
      await expectHit('/scoped/b', 200, policy, '"pool";r=1;t=60');
      await expectHit('/scoped/b', 200, policy, '"pool";r=0;t=60');
      await expectHit('/scoped/b', 429, policy, '"pool";r=0;t=60');
    });

    it('two controllers with the same class name (v1/, v2/) do not share route-scoped buckets', async () => {
      const v1 = await expectHit('/v1/users', 200, '"default";q=1;w=60', '"default";r=0;t=60');
      expect(v1.body).toEqual({ version: 1 });
      await expectHit('/v1/users', 429, '"default";q=1;w=60', '"default";r=0;t=60');
      const v2 = await expectHit('/v2/users', 200, '"default";q=1;w=60', '"default";r=0;t=60');
      expect(v2.body).toEqual({ version: 2 });
    });

    it("scope: 'shared' gives every route carrying the name one bucket, across controllers", async () => {
      const policy = '"pool";q=2;w=120';
      await expectHit('/scoped/c', 200, policy, '"pool";r=1;t=60');
      await expectHit('/scoped/d', 200, policy, '"pool";r=0;t=60');
      const denied = await expectHit('/scoped-elsewhere', 429, policy, '"pool";r=0;t=60');
      expect(denied.headers['retry-after']).toBe('60');
      await expectHit('/scoped/c', 429, policy, '"pool";r=0;t=60');
      // The route-scoped limit of the same name is a different bucket.
      await expectHit('/scoped/a', 200, policy, '"pool";r=1;t=60');
      clock.advance(60_000);
      await expectHit('/scoped/d', 200, policy, '"pool";r=0;t=60');
    });
  });

  describe('module-wide limits and defaults', () => {
    beforeEach(() =>
      boot(
        { limits: [{ name: 'cap', rate: '1/min', burst: 10 }], defaults: { rate: 1, burst: 2 } },
        [PlainController, ClassLimitedController, SkippedController, SkipOneController],
      ),
    );

    it('module limits and defaults both apply to an undecorated route, each with its own bucket', async () => {
      const policy = '"cap";q=10;w=600, "default";q=2;w=2';
      await expectHit('/plain/undecorated', 200, policy, '"cap";r=9;t=60, "default";r=1;t=1');
      await expectHit('/plain/undecorated', 200, policy, '"cap";r=8;t=60, "default";r=0;t=1');
      const denied = await expectHit(
        '/plain/undecorated',
        429,
        policy,
        '"cap";r=8;t=60, "default";r=0;t=1',
      );
      expect(denied.headers['retry-after']).toBe('1');
      // Route-scoped: another undecorated route has fresh buckets for both.
      await expectHit('/plain/undecorated-too', 200, policy, '"cap";r=9;t=60, "default";r=1;t=1');
    });

    it('a route limit with the module limit name replaces it, and defaults do not apply to decorated routes', async () => {
      await expectHit('/plain/cap-replaced', 200, '"cap";q=1;w=60', '"cap";r=0;t=60');
      const denied = await expectHit(
        '/plain/cap-replaced',
        429,
        '"cap";q=1;w=60',
        '"cap";r=0;t=60',
      );
      expect(denied.headers['retry-after']).toBe('60');
    });

    it('module limits apply on top of method limits; defaults do not', async () => {
      const policy = '"cap";q=10;w=600, "own";q=4;w=4';
      await expectHit('/plain/own', 200, policy, '"cap";r=9;t=60, "own";r=3;t=1');
    });

    it('module limits apply on top of class limits; defaults do not', async () => {
      await expectHit(
        '/classy/inherit',
        200,
        '"cap";q=10;w=600, "default";q=3;w=180',
        '"cap";r=9;t=60, "default";r=2;t=60',
      );
      await expectHit(
        '/classy/add',
        200,
        '"cap";q=10;w=600, "default";q=3;w=180, "extra";q=2;w=2',
        '"cap";r=9;t=60, "default";r=2;t=60, "extra";r=1;t=1',
      );
    });

    it("@SkipRateLimit('cap') / @SkipRateLimit('default') remove the module limit / the defaults", async () => {
      await expectHit('/plain/no-cap', 200, '"default";q=2;w=2', '"default";r=1;t=1');
      await expectHit('/plain/no-defaults', 200, '"cap";q=10;w=600', '"cap";r=9;t=60');
    });

    it('@SkipRateLimit() removes module limits and defaults too', async () => {
      await expectUnlimited('/plain/nothing', 12);
      await expectUnlimited('/skipped', 12);
      // ...but not a method's explicit limit: the nearest declaration wins.
      await expectHit('/skipped/limited', 200, '"own";q=1;w=60', '"own";r=0;t=60');
    });

    it("@SkipRateLimit('cap') on a class removes the module limit from every route of the class, unless a method declares its own", async () => {
      // Undecorated: the defaults apply, "cap" does not (burst 10 would show in the policy).
      await expectHit('/skip-one', 200, '"default";q=2;w=2', '"default";r=1;t=1');
      await expectHit('/skip-one/own', 200, '"own";q=4;w=240', '"own";r=3;t=60');
      // The method's explicit "cap" (burst 1) applies under the class skip.
      await expectHit('/skip-one/cap', 200, '"cap";q=1;w=60', '"cap";r=0;t=60');
      await expectHit('/skip-one/cap', 429, '"cap";q=1;w=60', '"cap";r=0;t=60');
    });

    it('the module limit is exhausted exactly at its burst', async () => {
      // "no-defaults" carries only "cap" (burst 10, 1/min).
      for (let i = 9; i >= 0; i--) {
        await expectHit('/plain/no-defaults', 200, '"cap";q=10;w=600', `"cap";r=${i};t=60`);
      }
      const denied = await expectHit(
        '/plain/no-defaults',
        429,
        '"cap";q=10;w=600',
        '"cap";r=0;t=60',
      );
      expect(denied.headers['retry-after']).toBe('60');
      expect(denied.body).toEqual({
        statusCode: 429,
        message: 'Too Many Requests',
        retryAfter: 60,
      });
    });
  });
});
