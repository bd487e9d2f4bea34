import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/** Plans as an application would keep them (here chosen by a header, as a stand-in for the user's account). */
export const PLANS: Record<string, { rate: string; burst: number }> = {
  free: { rate: '2/min', burst: 2 },
  pro: { rate: '10/min', burst: 10 },
};
const planOf = (ctx: ExecutionContext) =>
  PLANS[String(ctx.switchToHttp().getRequest().headers['x-plan'] ?? 'free')];

@Controller('plans')
export class PlansController {
  @RateLimit({
    name: 'api',
    rate: (ctx) => planOf(ctx)?.rate ?? 'lots',
    burst: (ctx) => planOf(ctx)?.burst ?? 1,
  })
  @Get('sync')
  sync() {
    return { ok: true };
  }

  /** The plan looked up asynchronously, as from a cache or a database. */
  @RateLimit({
    name: 'api',
    rate: async (ctx) => planOf(ctx)?.rate ?? 'lots',
    burst: async (ctx) => planOf(ctx)?.burst ?? 1,
  })
  @Get('async')
  async() {
    return { ok: true };
  }
}
