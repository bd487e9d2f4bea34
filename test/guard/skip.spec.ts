/**
 * `skip` per limit (sync and async, a predicate that throws) and the module's
 * `skip` and `allowList`, through the guard: a skipped limit is neither
 * charged nor in the headers; the others apply as usual.
 * End to end: test/skip/.
 */
import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';
import { createGuardHarness, type GuardHarness } from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

const header = (ctx: ExecutionContext, name: string): unknown =>
  ctx.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers[name];

@Controller('skip')
class SkipController {
  @RateLimit({ rate: '1/min', burst: 2, skip: (ctx) => header(ctx, 'x-internal') === 'yes' })
  @Get('one')
  one() {}

  @RateLimit([
    { name: 'all', rate: '1/min', burst: 3 },
    {
      name: 'partners',
      rate: '1/min',
      burst: 1,
      skip: async (ctx) => header(ctx, 'x-partner') === 'acme',
    },
  ])
  @Get('two')
  two() {}

  @RateLimit({
    rate: '1/min',
    burst: 1,
    skip: () => {
      throw new Error('skip bug');
    },
  })
  @Get('broken')
  broken() {}
}

const internal = { headers: { 'x-internal': 'yes' } };

describe('guard: skip', () => {
  const logs = silenceRateLimitLogs();
  let h: GuardHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a skipped limit is neither charged nor in the headers', async () => {
    h = await createGuardHarness(SkipController);
    for (let i = 0; i < 5; i++)
      expect(await h.canActivate('one', internal)).toMatchObject({ allowed: true, headers: {} });
    expect((await h.canActivate('one')).headers['ratelimit']).toBe('"default";r=1;t=60'); // the burst of 2 untouched
    expect((await h.canActivate('one')).status).toBe(200);
    expect((await h.canActivate('one')).status).toBe(429);
    expect((await h.canActivate('one', internal)).status).toBe(200);
  });

  it('two limits, one skipped asynchronously: the other still applies, alone in the headers', async () => {
    h = await createGuardHarness(SkipController);
    const partner = { headers: { 'x-partner': 'acme' } };
    for (const r of [2, 1, 0]) {
      const admitted = await h.canActivate('two', partner);
      expect([
        admitted.status,
        admitted.headers['ratelimit-policy'],
        admitted.headers['ratelimit'],
      ]).toEqual([200, '"all";q=3;w=180', `"all";r=${r};t=60`]);
    }
    const denied = await h.canActivate('two', partner);
    expect([denied.status, denied.headers['ratelimit'], denied.headers['retry-after']]).toEqual([
      429,
      '"all";r=0;t=60',
      '60',
    ]);
    // Without the header both apply, and "all" (shared with the partner calls above) is spent.
    const plain = await h.canActivate('two');
    expect([plain.status, plain.headers['ratelimit-policy']]).toEqual([
      429,
      '"all";q=3;w=180, "partners";q=1;w=60',
    ]);
  });

  it('a skip predicate that throws does not skip (the limit applies), and says so once', async () => {
    h = await createGuardHarness(SkipController);
    expect((await h.canActivate('broken')).status).toBe(200);
    expect((await h.canActivate('broken')).status).toBe(429);
    expect((await h.canActivate('broken')).status).toBe(429);
    expect(logs.messages().filter((message) => message.includes('skip bug'))).toHaveLength(1);
  });

  it("the module's skip: no limit applies to the calls it skips", async () => {
    h = await createGuardHarness(SkipController, {
      skip: (ctx) => header(ctx, 'user-agent') === 'kube-probe/1.30',
    });
    for (let i = 0; i < 4; i++)
      expect(
        await h.canActivate('one', { headers: { 'user-agent': 'kube-probe/1.30' } }),
      ).toMatchObject({ allowed: true, headers: {} });
    expect((await h.canActivate('one')).headers['ratelimit']).toBe('"default";r=1;t=60');
  });

  it('allowList: addresses and CIDRs no limit applies to; others are limited', async () => {
    h = await createGuardHarness(SkipController, { allowList: ['10.0.0.0/8', '2001:db8::5'] });
    for (const ip of ['10.1.2.3', '10.255.0.1', '2001:db8::5', '::ffff:10.0.0.9']) {
      for (let i = 0; i < 3; i++)
        expect([ip, await h.canActivate('one', { ip })]).toEqual([
          ip,
          expect.objectContaining({ allowed: true, headers: {} }),
        ]);
    }
    for (const ip of ['11.0.0.1', '2001:db8::6']) {
      expect((await h.canActivate('one', { ip })).headers['ratelimit']).toBe('"default";r=1;t=60');
    }
  });
});
