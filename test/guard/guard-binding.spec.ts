/**
 * A guard bound twice on one call (globally by the module and again with
 * `@UseGuards(RateLimitGuard)`: Nest runs both with the same execution
 * context) evaluates once: charged once, headers written once; so does the
 * interceptor bound twice. End to end: test/guard-binding/.
 */
import { Controller, Get, UnauthorizedException, UseGuards } from '@nestjs/common';
import { RateLimit, RateLimitGuard, SkipRateLimit } from 'nestjs-holdup';
import { lastValueFrom, of } from 'rxjs';
import {
  createGuardHarness,
  fakeRequest,
  FakeResponse,
  httpContext,
  type GuardHarness,
} from '../utils/guard-harness.js';

@UseGuards(RateLimitGuard)
@RateLimit({ rate: '1/min', burst: 2 })
@Controller('bound-twice')
class BoundTwiceController {
  @UseGuards(RateLimitGuard)
  @Get()
  index() {}

  @SkipRateLimit('default')
  @RateLimit({ name: 'login', rate: '1/min', burst: 2, charge: 'failures' })
  @Get('login')
  login() {}
}

/** What Nest's guards consumer does: every guard of the call with one context. */
async function runGuards(
  h: GuardHarness,
  handler: string,
  times: number,
  response = new FakeResponse(),
) {
  const context = httpContext(BoundTwiceController, handler, fakeRequest(), response);
  const answers: boolean[] = [];
  for (let i = 0; i < times; i++) answers.push(await h.guard.canActivate(context));
  return { answers, response };
}

describe('guard bound twice', () => {
  let h: GuardHarness;
  beforeEach(async () => {
    h = await createGuardHarness(BoundTwiceController);
  });
  afterEach(() => h.close());

  it('three bindings on one call: charged once, headers written once', async () => {
    const response = new FakeResponse();
    const setHeader = jestCount(response);
    const { answers } = await runGuards(h, 'index', 3, response);
    expect(answers).toEqual([true, true, true]);
    expect(response.headers['ratelimit']).toBe('"default";r=1;t=60');
    expect(setHeader.count('ratelimit')).toBe(1);
    // The second call is the bucket's second token, not its fourth.
    expect((await runGuards(h, 'index', 3)).answers).toEqual([true, true, true]);
    await expect(runGuards(h, 'index', 1)).rejects.toMatchObject({ status: 429 });
  });

  it('each call is evaluated: two calls, two charges', async () => {
    expect((await h.canActivate('index')).headers['ratelimit']).toBe('"default";r=1;t=60');
    expect((await h.canActivate('index')).headers['ratelimit']).toBe('"default";r=0;t=60');
  });

  it('the interceptor bound twice on one call gives a refund once', async () => {
    // A failure: stays charged (1 token left).
    expect(
      (await h.call('login', () => Promise.reject(new UnauthorizedException()))).headers[
        'ratelimit'
      ],
    ).toBe('"login";r=1;t=60');
    const request = fakeRequest();
    const response = new FakeResponse();
    expect(
      await h.guard.canActivate(httpContext(BoundTwiceController, 'login', request, response)),
    ).toBe(true);
    // Nest builds one context for the interceptors of a call: both bindings see it.
    const context = httpContext(BoundTwiceController, 'login', request, response);
    const inner = { handle: () => of('ok') };
    const outer = { handle: () => h.interceptor.intercept(context, inner) };
    expect(await lastValueFrom(h.interceptor.intercept(context, outer))).toBe('ok');
    expect(response.headers['ratelimit']).toBe('"login";r=0;t=60');
    // A success under 'failures', refunded once: one token left again (twice would be two).
    expect(
      (await h.call('login', () => Promise.reject(new UnauthorizedException()))).headers[
        'ratelimit'
      ],
    ).toBe('"login";r=0;t=60');
    expect((await h.call('login')).status).toBe(429);
  });
});

/** Counts the headers set on `response`, by lower-case name. */
function jestCount(response: FakeResponse) {
  const counts = new Map<string, number>();
  const setHeader = response.setHeader.bind(response);
  response.setHeader = (name: string, value: unknown) => {
    counts.set(name.toLowerCase(), (counts.get(name.toLowerCase()) ?? 0) + 1);
    return setHeader(name, value);
  };
  return { count: (name: string) => counts.get(name) ?? 0 };
}
