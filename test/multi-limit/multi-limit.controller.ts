import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/** Cost from `?cost=<n>`, 1 when absent: shows the cost function sees the request. */
export const costFromQuery = (context: ExecutionContext): number => {
  const query = context
    .switchToHttp()
    .getRequest<{ query: Record<string, string | undefined> }>().query;
  return query.cost === undefined ? 1 : Number(query.cost);
};

@Controller('multi')
export class MultiLimitController {
  /** "slow" has the larger burst but refills once a minute; "fast" refills every second. */
  @RateLimit([
    { name: 'slow', rate: '1/min', burst: 5 },
    { name: 'fast', rate: 1, burst: 2 },
  ])
  @Get('pair')
  pair() {
    return { ok: true };
  }

  @RateLimit({ rate: 1, burst: 5, cost: 2 })
  @Get('static-cost')
  staticCost() {
    return { ok: true };
  }

  @RateLimit({ rate: 1, burst: 5, cost: costFromQuery })
  @Get('dynamic-cost')
  dynamicCost() {
    return { ok: true };
  }

  @RateLimit([
    { name: 'outer', rate: '1/min', burst: 10 },
    { name: 'inner', rate: 1, burst: 3, cost: costFromQuery },
  ])
  @Get('dynamic-pair')
  dynamicPair() {
    return { ok: true };
  }
}
