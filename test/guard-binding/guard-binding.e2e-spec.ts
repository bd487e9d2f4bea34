import { type INestApplication, type Provider, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { ManualClock, RateLimitGuard, RateLimitModule } from 'nestjs-holdup';
import { PLATFORMS, type Platform } from '../utils/create-app.js';
import {
  BoundController,
  BoundTwiceController,
  FreeController,
  PlainController,
} from './guard-binding.fixtures.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

interface Setup {
  readonly bindGlobally?: boolean;
  readonly controllers: Type[];
  readonly providers?: Provider[];
  /** Called between creation and init, as `main.ts` would call `app.useGlobalGuards()` before `listen()`. */
  readonly beforeInit?: (app: INestApplication) => void;
}

async function boot(platform: Platform, setup: Setup): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      RateLimitModule.forRoot({
        bindGlobally: setup.bindGlobally,
        clock: new ManualClock(10_000_000),
      }),
    ],
    controllers: setup.controllers,
    providers: setup.providers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication(
    platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    { logger: false },
  );
  setup.beforeInit?.(app);
  await app.init();
  if (platform === 'fastify') await app.getHttpAdapter().getInstance().ready();
  return app;
}

describe.each(PLATFORMS)('where RateLimitGuard is bound (%s)', (platform) => {
  let app: INestApplication | undefined;
  const logs = silenceRateLimitLogs();

  const statuses = async (path: string, times: number) => {
    const out: number[] = [];
    for (let i = 0; i < times; i++)
      out.push((await request(app!.getHttpServer()).get(path)).status);
    return out;
  };
  const unguardedWarnings = () =>
    logs.warn.mock.calls
      .map(([message]) => String(message))
      .filter((message) => message.includes('no RateLimitGuard runs'));

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  describe('bound more than once: one evaluation per request', () => {
    it('globally (the module) and on the controller', async () => {
      app = await boot(platform, { controllers: [BoundController] });
      expect(await statuses('/bound', 3)).toEqual([200, 200, 429]);
    });

    it('globally, on the controller and on the route', async () => {
      app = await boot(platform, { controllers: [BoundTwiceController] });
      expect(await statuses('/bound-twice', 3)).toEqual([200, 200, 429]);
    });

    it('globally twice (the module, and an APP_GUARD of the application)', async () => {
      app = await boot(platform, {
        controllers: [PlainController],
        providers: [{ provide: APP_GUARD, useExisting: RateLimitGuard }],
      });
      expect(await statuses('/plain', 3)).toEqual([200, 200, 429]);
    });

    it('the headers are written once too', async () => {
      app = await boot(platform, { controllers: [BoundTwiceController] });
      const res = await request(app.getHttpServer()).get('/bound-twice');
      expect(res.headers['ratelimit']).toMatch(/^"default";r=1;t=\d+$/);
    });
  });

  describe('bindGlobally: false', () => {
    it('no guard anywhere: one warning at start-up naming the limited routes, and indeed nothing is limited', async () => {
      app = await boot(platform, {
        bindGlobally: false,
        controllers: [PlainController, FreeController],
      });
      const said = unguardedWarnings();
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(
        'no RateLimitGuard runs for 2 route(s) with limits: PlainController.index, PlainController.other',
      );
      expect(said[0]).toContain('@UseGuards(RateLimitGuard)');
      expect(said[0]).not.toContain('FreeController');
      expect(await statuses('/plain', 3)).toEqual([200, 200, 200]);
    });

    it('the guard on the controller: no warning, limited', async () => {
      app = await boot(platform, {
        bindGlobally: false,
        controllers: [BoundController, FreeController],
      });
      expect(unguardedWarnings()).toEqual([]);
      expect(await statuses('/bound', 3)).toEqual([200, 200, 429]);
    });

    it('the guard as an APP_GUARD of the application: no warning, limited', async () => {
      app = await boot(platform, {
        bindGlobally: false,
        controllers: [PlainController],
        providers: [{ provide: APP_GUARD, useExisting: RateLimitGuard }],
      });
      expect(unguardedWarnings()).toEqual([]);
      expect(await statuses('/plain', 3)).toEqual([200, 200, 429]);
    });

    it('app.useGlobalGuards(app.get(RateLimitGuard)) before init: no warning, limited', async () => {
      app = await boot(platform, {
        bindGlobally: false,
        controllers: [PlainController],
        beforeInit: (created) => created.useGlobalGuards(created.get(RateLimitGuard)),
      });
      expect(unguardedWarnings()).toEqual([]);
      expect(await statuses('/plain', 3)).toEqual([200, 200, 429]);
    });

    it('only some routes guarded: the warning names the others', async () => {
      app = await boot(platform, {
        bindGlobally: false,
        controllers: [BoundController, PlainController],
      });
      const said = unguardedWarnings();
      expect(said).toHaveLength(1);
      expect(said[0]).toContain('for 2 route(s)');
      expect(said[0]).not.toContain('BoundController');
    });
  });
});
