/**
 * User hooks of the throttler-compat guard that throw or never answer: a
 * `getTracker` (a user lookup without a timeout) or an `@Throttle` `limit`
 * function (a plan lookup) whose promise never settles. @nestjs/throttler
 * waits for them forever; the native module bounds its dynamic functions at
 * DYNAMIC_LIMIT_TIMEOUT_MS of the module clock, and so does the compat now:
 * the call is then decided by `failMode` ('closed' 503, 'open' admits), said
 * once per throttler, never per request. A hook that throws is left as
 * throttler leaves it: the error reaches Nest (500), the other routes limited.
 * Before the fix the 40 calls stayed pending after an hour of the module's
 * clock (the test times out waiting for their deadlines).
 */
import request from 'supertest';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ManualClock } from 'nestjs-holdup';
import { Throttle, ThrottlerGuard, ThrottlerModule, seconds } from 'nestjs-holdup/throttler-compat';
import { createApp, PLATFORMS } from '../utils/create-app.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const DEADLINE_MS = 2_000; // DYNAMIC_LIMIT_TIMEOUT_MS
let hookCalls = 0;
const hang = (): Promise<never> => {
  hookCalls++;
  return new Promise<never>(() => undefined);
};
const report = process.env.HOLDUP_REPORT === '1';

@Controller()
class HookController {
  @Throttle({ default: { limit: hang as never, ttl: seconds(10) } })
  @Get('limit-hangs')
  limitHangs() {
    return { ok: true };
  }

  @Throttle({ default: { limit: 2, ttl: seconds(10), getTracker: hang } })
  @Get('tracker-hangs')
  trackerHangs() {
    return { ok: true };
  }

  @Throttle({
    default: {
      limit: 2,
      ttl: seconds(10),
      getTracker: () => {
        throw new Error('tracker lookup failed');
      },
    },
  })
  @Get('tracker-throws')
  trackerThrows() {
    return { ok: true };
  }

  // A throttler name the module does not configure: ignored, as throttler ignores it.
  @Throttle({ unknown: { limit: 1, ttl: seconds(10) } })
  @Get('unknown-name')
  unknownName() {
    return { ok: true };
  }

  @Throttle({ default: { limit: () => 'many' as never, ttl: seconds(10) } })
  @Get('garbage-limit')
  garbageLimit() {
    return { ok: true };
  }

  @Get('plain')
  plain() {
    return { ok: true };
  }
}

const logs = silenceRateLimitLogs();
const hookLines = () => logs.messages().filter((line) => line.includes('did not answer'));
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe.each(PLATFORMS)('throttler-compat hooks that hang or throw (%s)', (platform) => {
  let app: INestApplication;
  let clock: ManualClock;
  const boot = async (failMode: 'open' | 'closed') => {
    clock = new ManualClock(1_700_000_000_000);
    app = await createApp(platform, {
      imports: [
        ThrottlerModule.forRoot({ throttlers: [{ limit: 2, ttl: seconds(10) }], clock, failMode }),
      ],
      controllers: [HookController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    });
  };
  afterEach(() => app.close());
  const get = (path: string) => request(app.getHttpServer()).get(path);

  it.each([
    ['closed', 503],
    ['open', 200],
  ] as const)(
    "never-answering limit and getTracker, failMode '%s': 40 calls answered %d at the deadline, one line",
    async (failMode, status) => {
      await boot(failMode);
      hookCalls = 0;
      const calls = Array.from({ length: 40 }, (_, i) =>
        get(i % 2 === 0 ? '/limit-hangs' : '/tracker-hangs').then((res) => res.status),
      );
      while (hookCalls < 40) await settle(); // every call waits on its hook
      expect(clock.pendingTimers).toBe(40); // each under its deadline
      clock.advance(DEADLINE_MS - 1);
      expect(clock.pendingTimers).toBe(40); // none decided before the deadline
      clock.advance(1);
      const statuses = await Promise.all(calls);
      if (report)
        console.log(`${platform} ${failMode}: ${statuses.join(',')}; lines ${hookLines().length}`);
      expect(statuses).toEqual(Array<number>(40).fill(status));
      expect(clock.pendingTimers).toBe(0);
      expect(hookLines()).toHaveLength(1);
      // The other routes are still limited.
      expect([(await get('/plain')).status, (await get('/plain')).status]).toEqual([200, 200]);
      expect((await get('/plain')).status).toBe(429);
    },
  );

  it('no line per request from the compat guard: an unknown throttler name, a garbage limit (failMode decides, said once)', async () => {
    await boot('open');
    const statuses = new Set<number>();
    for (let i = 0; i < 50; i++) statuses.add((await get('/unknown-name')).status);
    const garbage = new Set<number>();
    for (let i = 0; i < 50; i++) garbage.add((await get('/garbage-limit')).status);
    const guardLines = logs.messages().filter((line) => line.includes(`Invalid "limit"`));
    if (report)
      console.log(
        `${platform}: unknown name ${[...statuses].join()}, garbage ${[...garbage].join()}; guard lines ${guardLines.length}, all lines ${logs.messages().length}`,
      );
    // The unknown name is ignored: the default throttler (2 per 10 s) limits the route.
    expect([...statuses]).toEqual([200, 429]);
    expect([...garbage]).toEqual([200]); // failMode 'open' decides, said once
    expect(guardLines).toHaveLength(1); // 50 (one per 500, from Nest) before
  });

  it('a getTracker that throws: 500 per call as with throttler (the error reaches Nest), the rest limited', async () => {
    await boot('open');
    for (let i = 0; i < 10; i++) expect((await get('/tracker-throws')).status).toBe(500);
    expect(hookLines()).toHaveLength(0);
    expect([(await get('/plain')).status, (await get('/plain')).status]).toEqual([200, 200]);
    expect((await get('/plain')).status).toBe(429);
  });
});
