/**
 * Budgets across a hierarchy (issue 30, the recipe in docs/settle.md): an
 * organisation of 1,000 tokens an hour, its teams 600, their users 400;
 * every call reserves 100 at each level or is refused by the first level
 * short of it, charging none; the actual cost settles at every level.
 */
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { STORES, storesOfKind } from '../utils/stores.js';
import { HierarchyController } from './hierarchy.controller.js';

describe.each(STORES)('budgets across a hierarchy (%s store)', (kind) => {
  const makeStore = storesOfKind(kind);

  describe.each(PLATFORMS)('%s', (platform) => {
    let app: INestApplication;

    beforeEach(async () => {
      app = await createApp(platform, {
        imports: [
          RateLimitModule.forRoot({
            clock: new ManualClock(1_700_000_000_000),
            store: makeStore(`hierarchy-${kind}-${platform}`),
          }),
        ],
        controllers: [HierarchyController],
      });
    });
    afterEach(() => app.close());

    const call = (route: string, user: string, team: string, spend = 100) =>
      request(app.getHttpServer())
        .post(`/h/${route}?spend=${spend}`)
        .set({ 'x-org': 'acme', 'x-team': team, 'x-user': user });

    it('org above team above user: each level refuses when it is short, and nothing is charged then', async () => {
      // A user's 400: 4 calls, the 5th refused by the user level.
      for (let i = 0; i < 4; i++) expect((await call('chat', 'ann', 'red')).status).toBe(201);
      const userShort = await call('chat', 'ann', 'red');
      expect(userShort.status).toBe(429);
      expect(userShort.headers['ratelimit']).toMatch(
        /^"org";r=600;t=\d+, "team";r=200;t=\d+, "user";r=0;t=\d+$/,
      );
      // A teammate, on another route: the team's 600 leave 200, 2 calls; the refusal charges no level.
      for (let i = 0; i < 2; i++) expect((await call('embed', 'bob', 'red')).status).toBe(201);
      const teamShort = await call('embed', 'bob', 'red');
      expect(teamShort.status).toBe(429);
      expect(teamShort.headers['ratelimit']).toMatch(
        /^"org";r=400;t=\d+, "team";r=0;t=\d+, "user";r=200;t=\d+$/,
      );
      // Another team, one call per user: the organisation has 400 left; each call spends 50 of
      // its 100, so 7 fit and the 8th is the organisation's to refuse.
      for (let i = 0; i < 7; i++)
        expect((await call('chat', `cat${i}`, 'blue', 50)).status).toBe(201);
      const orgShort = await call('chat', 'cat7', 'blue', 50);
      expect(orgShort.status).toBe(429);
      // 600 + 7 x 50 spent: 50 left, short of an estimate of 100; the team and the user have more
      // (the user's bucket untouched: a refused call charges no level).
      expect(orgShort.headers['ratelimit']).toMatch(
        /^"org";r=50;t=\d+, "team";r=250;t=\d+, "user";r=400;t=\d+$/,
      );
    });
  });
});
