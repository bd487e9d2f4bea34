import { Controller, Post, Query } from '@nestjs/common';
import { RateLimit, type RateLimitOptions } from 'nestjs-holdup';

/**
 * The hierarchy recipe (docs/settle.md): an organisation's budget above a
 * team's above a user's, each a limit keyed at its level and shared by every
 * route that spends it (`scope: 'shared'`). A call is admitted only if every
 * level has its estimate (all charged or none), and settles at every level.
 */
const usage = ({ result }: { result: unknown }) => (result as { usage: number }).usage;

export function budgets(estimate: number): RateLimitOptions[] {
  const level = (name: string, perHour: number, header: string): RateLimitOptions => ({
    name,
    rate: `${perHour}/hour`,
    burst: perHour,
    key: `header:${header}`,
    scope: 'shared',
    cost: estimate,
    settle: usage,
  });
  return [level('org', 1000, 'x-org'), level('team', 600, 'x-team'), level('user', 400, 'x-user')];
}

@Controller('h')
export class HierarchyController {
  @RateLimit(budgets(100))
  @Post('chat')
  chat(@Query('spend') spend: string) {
    return { usage: Number(spend) };
  }

  /** Another route spending the same budgets. */
  @RateLimit(budgets(100))
  @Post('embed')
  embed(@Query('spend') spend: string) {
    return { usage: Number(spend) };
  }
}
