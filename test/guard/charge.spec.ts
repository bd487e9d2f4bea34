/**
 * `charge: 'failures' | 'successes'` and `isChargeFailure`, through the guard and
 * the interceptor around a handler: every request is charged when admitted,
 * and given back after the handler when its outcome says it should not have
 * counted. End to end: test/charge/.
 */
import {
  ConflictException,
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  Post,
  UnauthorizedException,
} from '@nestjs/common';
import { throwError } from 'rxjs';
import { RateLimit } from 'nestjs-holdup';
import { createGuardHarness, fakeRequest, type GuardHarness } from '../utils/guard-harness.js';
import { silenceRateLimitLogs } from '../utils/silence-logs.js';

@Controller('charge')
class ChargeController {
  @RateLimit({ name: 'login', rate: '5/15min', burst: 5, charge: 'failures' })
  @Post('login')
  login() {}

  @RateLimit({ name: 'exports', rate: '3/hour', burst: 3, charge: 'successes' })
  @Get('export')
  export() {}

  @RateLimit({
    name: 'conflicts',
    rate: '2/hour',
    burst: 2,
    charge: 'failures',
    isChargeFailure: ({ error }) => error instanceof HttpException && error.getStatus() === 409,
  })
  @Get('conflict')
  conflict() {}

  @RateLimit({
    name: 'broken',
    rate: '2/hour',
    burst: 2,
    charge: 'failures',
    isChargeFailure: () => {
      throw new Error('predicate bug');
    },
  })
  @Get('broken')
  broken() {}
}

const ok = () => ({ ok: true });
const wrongPassword = () => {
  throw new UnauthorizedException('wrong password');
};

describe('guard and interceptor: charge by outcome', () => {
  const logs = silenceRateLimitLogs();
  let h: GuardHarness;
  beforeEach(async () => {
    h = await createGuardHarness(ChargeController);
  });
  afterEach(() => h.close());

  it("'failures': successes give their token back (10 in a row), then 5 failures fit and the 6th is denied", async () => {
    for (let i = 0; i < 10; i++) {
      const call = await h.call('login', ok);
      expect([call.status, call.handler?.value, call.headers['ratelimit']]).toEqual([
        200,
        { ok: true },
        '"login";r=4;t=180',
      ]);
    }
    for (let i = 0; i < 5; i++)
      expect((await h.call('login', wrongPassword)).handler?.error).toBeInstanceOf(
        UnauthorizedException,
      );
    const denied = await h.call('login', ok);
    expect([
      denied.status,
      denied.headers['ratelimit'],
      denied.headers['retry-after'],
      denied.handler,
    ]).toEqual([429, '"login";r=0;t=180', '180', undefined]);
  });

  it('a failure reported through an observable that errors counts too; the guard alone charges', async () => {
    for (let i = 0; i < 4; i++)
      await h.call('login', () => throwError(() => new UnauthorizedException()));
    // Admitted by the guard, no handler outcome yet: charged.
    const request = fakeRequest();
    expect((await h.canActivate('login', request)).allowed).toBe(true);
    expect((await h.canActivate('login')).status).toBe(429);
    // Its handler succeeds: the token comes back.
    expect((await h.intercept('login', ok, request)).error).toBeUndefined();
    expect((await h.call('login', ok)).status).toBe(200);
  });

  it("'successes': failed calls give their token back, successes count", async () => {
    for (let i = 0; i < 5; i++)
      expect(
        (await h.call('export', () => Promise.reject(new ForbiddenException()))).handler?.error,
      ).toBeInstanceOf(ForbiddenException);
    for (let i = 0; i < 3; i++) expect((await h.call('export', ok)).status).toBe(200);
    expect((await h.call('export', ok)).status).toBe(429);
  });

  it('isChargeFailure decides what counts (only 409s); one that throws leaves the request charged, said once', async () => {
    for (const status of [400, 500, 404])
      expect(
        (await h.call('conflict', () => Promise.reject(new HttpException('status', status))))
          .status,
      ).toBe(200);
    expect((await h.call('conflict', ok)).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect(
        (await h.call('conflict', () => Promise.reject(new ConflictException()))).handler?.error,
      ).toBeInstanceOf(ConflictException);
    expect((await h.call('conflict', ok)).status).toBe(429);

    for (let i = 0; i < 2; i++) expect((await h.call('broken', ok)).status).toBe(200);
    expect((await h.call('broken', ok)).status).toBe(429);
    expect(logs.messages('error')).toEqual([
      expect.stringContaining('limit "broken": isChargeFailure threw (predicate bug)'),
    ]);
  });

  it('a refund never makes the bucket fuller than it would have been: after a full refill, a success gives nothing back', async () => {
    for (let i = 0; i < 4; i++) await h.call('login', wrongPassword);
    h.clock.advance(15 * 60_000);
    for (let i = 0; i < 3; i++) expect((await h.call('login', ok)).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await h.call('login', wrongPassword)).handler?.error).toBeInstanceOf(
        UnauthorizedException,
      );
    expect((await h.call('login', wrongPassword)).status).toBe(429);
  });
});
