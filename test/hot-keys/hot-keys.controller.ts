import { Controller, Get, Query } from '@nestjs/common';
import { RateLimit, RateLimiter, SkipRateLimit } from 'nestjs-holdup';

@Controller()
export class HotKeysController {
  constructor(private readonly limiter: RateLimiter) {}

  @RateLimit({ name: 'search', rate: '1/min', burst: 1 })
  @Get('search')
  search() {
    return { ok: true };
  }

  @RateLimit({ name: 'partner', rate: '1/min', burst: 2, key: 'header:x-api-key' })
  @Get('partner')
  partner() {
    return { ok: true };
  }

  /** What an operator's admin endpoint looks like (guard it in a real app: it lists callers). */
  @SkipRateLimit()
  @Get('admin/hot-keys')
  hot(@Query('limit') limit?: string) {
    return this.limiter.hottestKeys({ limit, top: 3 });
  }
}
