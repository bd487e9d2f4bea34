import { Controller, Get, Headers, UnauthorizedException } from '@nestjs/common';
import type { ExecutionContext } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

const header = (ctx: ExecutionContext, name: string): unknown =>
  ctx.switchToHttp().getRequest().headers[name];

@Controller('skip')
export class SkipController {
  /** Internal callers (a header the gateway sets) are not limited. */
  @RateLimit({ rate: '1/min', burst: 2, skip: (ctx) => header(ctx, 'x-internal') === 'yes' })
  @Get('one')
  one() {
    return { ok: true };
  }

  /** Two limits, the partner one skipped for partners (decided asynchronously, as from a cache). */
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
  two() {
    return { ok: true };
  }

  /** A skip predicate with a bug: the limit applies. */
  @RateLimit({
    rate: '1/min',
    burst: 1,
    skip: () => {
      throw new Error('skip bug');
    },
  })
  @Get('broken')
  broken() {
    return { ok: true };
  }

  /** A skipped limit beside one that counts failures: the refund goes to the right bucket. */
  @RateLimit([
    { name: 'noisy', rate: '1/min', burst: 1, skip: (ctx) => header(ctx, 'x-internal') === 'yes' },
    { name: 'login', rate: '1/min', burst: 2, charge: 'failures' },
  ])
  @Get('login')
  login(@Headers('x-password') password?: string) {
    if (password !== 'right') throw new UnauthorizedException();
    return { ok: true };
  }
}
