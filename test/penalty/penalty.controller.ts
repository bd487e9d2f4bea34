import { Controller, Get, Post } from '@nestjs/common';
import { RateLimit, RateLimiter } from 'nestjs-holdup';

const EXPORTS = { name: 'exports', rate: '10/min', burst: 5 };

@Controller('penalty')
export class PenaltyController {
  constructor(private readonly limiter: RateLimiter) {}

  /** Over the limit once, locked out for 15 minutes. */
  @RateLimit({ name: 'abuse', rate: '10/min', burst: 2, blockDuration: '15min' })
  @Get()
  guarded() {
    return { ok: true };
  }

  @Get('export')
  async export() {
    await this.limiter.enforce('account-1', EXPORTS);
    return { ok: true };
  }

  /** An operator bans the account for a minute. */
  @Post('ban')
  async ban() {
    const decision = await this.limiter.block('account-1', EXPORTS, 60_000);
    return { remaining: decision.remaining };
  }
}
