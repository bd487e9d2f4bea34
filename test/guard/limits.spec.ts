/**
 * Plain limits and several limits on one route, through the guard alone
 * (test/utils/guard-harness.ts): admit the burst, deny with an exact
 * Retry-After, refill with the clock; all or nothing across limits.
 * End to end: test/basic/, test/multi-limit/.
 */
import { Controller, Get } from '@nestjs/common';
import { RateLimit, RateLimitExceededException, SkipRateLimit } from 'nestjs-holdup';
import {
  createGuardHarness,
  type GuardHarness,
  type GuardOutcome,
} from '../utils/guard-harness.js';

@RateLimit({ rate: '1/s', burst: 3 })
@Controller('basic')
class LimitsController {
  @Get()
  index() {}

  @RateLimit({ name: 'search', rate: 2, burst: 4, cost: 2 })
  @Get('search')
  search() {}

  @SkipRateLimit()
  @Get('health')
  health() {}

  /** "slow" has the larger burst but refills once a minute; "fast" refills every second. */
  @SkipRateLimit('default')
  @RateLimit([
    { name: 'slow', rate: '1/min', burst: 5 },
    { name: 'fast', rate: 1, burst: 2 },
  ])
  @Get('pair')
  pair() {}
}

const seen = (outcome: GuardOutcome) => [
  outcome.status,
  outcome.headers['ratelimit'],
  outcome.headers['retry-after'],
];

describe('guard: plain limits', () => {
  let h: GuardHarness;
  beforeEach(async () => {
    h = await createGuardHarness(LimitsController);
  });
  afterEach(() => h.close());

  it('admits the burst, then denies with an exact Retry-After, then refills with the clock', async () => {
    for (let i = 0; i < 3; i++) {
      const admitted = await h.canActivate('index');
      expect(admitted).toMatchObject({ allowed: true, status: 200 });
      expect(admitted.headers['ratelimit-policy']).toBe('"default";q=3;w=3');
      expect(admitted.headers['ratelimit']).toBe(`"default";r=${2 - i};t=1`);
      expect(admitted.headers['retry-after']).toBeUndefined();
    }
    const denied = await h.canActivate('index');
    expect(seen(denied)).toEqual([429, '"default";r=0;t=1', '1']);
    expect(denied.headers['ratelimit-policy']).toBe('"default";q=3;w=3');
    expect(denied.error).toBeInstanceOf(RateLimitExceededException);
    expect((denied.error as RateLimitExceededException).getResponse()).toEqual({
      statusCode: 429,
      message: 'Too Many Requests',
      retryAfter: 1,
    });
    h.clock.advance(999);
    expect((await h.canActivate('index')).status).toBe(429);
    h.clock.advance(1);
    expect(seen(await h.canActivate('index'))).toEqual([200, '"default";r=0;t=1', undefined]);
  });

  it('buckets are per client address and per route', async () => {
    for (let i = 0; i < 3; i++)
      expect((await h.canActivate('index', { ip: '198.51.100.1' })).allowed).toBe(true);
    expect((await h.canActivate('index', { ip: '198.51.100.1' })).status).toBe(429);
    expect(seen(await h.canActivate('index', { ip: '198.51.100.2' }))).toEqual([
      200,
      '"default";r=2;t=1',
      undefined,
    ]);
    expect((await h.canActivate('pair', { ip: '198.51.100.1' })).allowed).toBe(true);
  });

  it('class and method limits both apply: the method limit (cost 2, burst 4) denies the third request', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await h.canActivate('search')).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await h.canActivate('index')).headers['ratelimit']).toBe('"default";r=2;t=1');
  });

  it('@SkipRateLimit() routes are never limited and get no headers', async () => {
    for (let i = 0; i < 10; i++)
      expect(await h.canActivate('health')).toMatchObject({ allowed: true, headers: {} });
  });
});

describe('guard: several limits on one route (all or nothing)', () => {
  let h: GuardHarness;
  beforeEach(async () => {
    h = await createGuardHarness(LimitsController);
  });
  afterEach(() => h.close());
  const policy = '"slow";q=5;w=300, "fast";q=2;w=2';

  it('a request denied by the second limit is not charged to the first', async () => {
    const first = await h.canActivate('pair');
    expect(seen(first)).toEqual([200, '"slow";r=4;t=60, "fast";r=1;t=1', undefined]);
    expect(first.headers['ratelimit-policy']).toBe(policy);
    expect(seen(await h.canActivate('pair'))).toEqual([
      200,
      '"slow";r=3;t=60, "fast";r=0;t=1',
      undefined,
    ]);
    for (let i = 0; i < 3; i++) {
      const denied = await h.canActivate('pair');
      expect(seen(denied)).toEqual([429, '"slow";r=3;t=60, "fast";r=0;t=1', '1']);
      expect(denied.headers['ratelimit-policy']).toBe(policy);
    }
    h.clock.advance(1000);
    expect(seen(await h.canActivate('pair'))).toEqual([
      200,
      '"slow";r=2;t=59, "fast";r=0;t=1',
      undefined,
    ]);
  });

  it('a request denied by the first limit is not charged to the second', async () => {
    await h.canActivate('pair');
    await h.canActivate('pair');
    for (const r of [2, 1, 0]) {
      h.clock.advance(1000);
      expect((await h.canActivate('pair')).headers['ratelimit']).toBe(
        `"slow";r=${r};t=${59 - (2 - r)}, "fast";r=0;t=1`,
      );
    }
    h.clock.advance(1000);
    // Denied by "slow" while "fast" has a token: "fast" keeps it.
    expect(seen(await h.canActivate('pair'))).toEqual([
      429,
      '"slow";r=0;t=56, "fast";r=1;t=1',
      '56',
    ]);
    h.clock.advance(1000);
    expect(seen(await h.canActivate('pair'))).toEqual([
      429,
      '"slow";r=0;t=55, "fast";r=2;t=1',
      '55',
    ]);
  });
});
