/**
 * Dynamic limits (rate and burst as functions of the call, sync and async),
 * through the guard: each call gets its plan's bucket, the headers show the
 * quota that applied, a plan change keeps what was consumed, a bad value is
 * decided by the fail mode and said once. End to end: test/dynamic/.
 */
import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';
import {
  createGuardHarness,
  type GuardHarness,
  type GuardOutcome,
} from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const PLANS: Record<string, { rate: string; burst: number }> = {
  free: { rate: '2/min', burst: 2 },
  pro: { rate: '10/min', burst: 10 },
};
const planOf = (ctx: ExecutionContext) =>
  PLANS[
    String(
      ctx.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers['x-plan'] ??
        'free',
    )
  ];

@Controller('plans')
class PlansController {
  @RateLimit({
    name: 'api',
    rate: (ctx) => planOf(ctx)?.rate ?? 'lots',
    burst: (ctx) => planOf(ctx)?.burst ?? 1,
  })
  @Get('sync')
  sync() {}

  @RateLimit({
    name: 'api',
    rate: async (ctx) => planOf(ctx)?.rate ?? 'lots',
    burst: async (ctx) => planOf(ctx)?.burst ?? 1,
  })
  @Get('async')
  async() {}

  /** A rate function alone: the burst defaults as for a declared rate, per call. */
  @RateLimit({
    name: 'api',
    rate: (ctx) => (planOf(ctx) === PLANS['pro'] ? '10/min' : 3),
  })
  @Get('rate-only')
  rateOnly() {}
}

const seen = (outcome: GuardOutcome) => [
  outcome.status,
  outcome.headers['ratelimit-policy'],
  outcome.headers['ratelimit'],
];
const as = (plan: string, ip = '203.0.113.1') => ({ ip, headers: { 'x-plan': plan } });

describe('guard: dynamic rate and burst', () => {
  const logs = silenceRateLimitLogs();
  let h: GuardHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a rate function with no burst: a string's count ('10/min' holds 10), a number's one second", async () => {
    h = await createGuardHarness(PlansController);
    expect(seen(await h.canActivate('rateOnly', as('pro')))).toEqual([
      200,
      '"api";q=10;w=60',
      '"api";r=9;t=6',
    ]);
    expect(seen(await h.canActivate('rateOnly', as('free', '203.0.113.2')))).toEqual([
      200,
      '"api";q=3;w=1',
      '"api";r=2;t=1',
    ]);
  });

  it.each(['sync', 'async'])('%s: each plan its own quota, in the headers too', async (handler) => {
    h = await createGuardHarness(PlansController);
    expect(seen(await h.canActivate(handler, as('free')))).toEqual([
      200,
      '"api";q=2;w=60',
      '"api";r=1;t=30',
    ]);
    expect(seen(await h.canActivate(handler, as('free')))).toEqual([
      200,
      '"api";q=2;w=60',
      '"api";r=0;t=30',
    ]);
    const denied = await h.canActivate(handler, as('free'));
    expect([denied.status, denied.headers['retry-after']]).toEqual([429, '30']);
    expect(seen(await h.canActivate(handler, as('pro', '203.0.113.2')))).toEqual([
      200,
      '"api";q=10;w=60',
      '"api";r=9;t=6',
    ]);
  });

  it('a plan change takes effect on the next call and keeps what was consumed (as time to refill)', async () => {
    h = await createGuardHarness(PlansController);
    await h.canActivate('sync', as('free'));
    await h.canActivate('sync', as('free'));
    const upgraded = await h.canActivate('sync', as('pro'));
    expect([upgraded.status, upgraded.headers['retry-after']]).toEqual([429, '6']);
    h.clock.advance(6000);
    expect(seen(await h.canActivate('sync', as('pro')))).toEqual([
      200,
      '"api";q=10;w=60',
      '"api";r=0;t=6',
    ]);
  });

  it("a bad value is decided by the fail mode ('open' admits that call), and said once", async () => {
    h = await createGuardHarness(PlansController);
    for (let i = 0; i < 3; i++)
      expect((await h.canActivate('sync', as('platinum'))).status).toBe(200);
    expect(
      logs.messages('warn').filter((message) => message.includes('rate or burst function failed')),
    ).toEqual([
      expect.stringContaining(
        'the rate function produced a bad value: rate must be a positive number',
      ),
    ]);
    await h.canActivate('sync', as('free'));
    await h.canActivate('sync', as('free'));
    expect((await h.canActivate('sync', as('free'))).status).toBe(429);
  });

  it("failMode 'closed': a bad value answers 503", async () => {
    h = await createGuardHarness(PlansController, { failMode: 'closed' });
    expect((await h.canActivate('async', as('platinum'))).status).toBe(503);
    expect((await h.canActivate('sync', as('platinum'))).status).toBe(503);
  });
});
