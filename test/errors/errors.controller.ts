import { Controller, Get, Headers } from '@nestjs/common';
import {
  RateLimit,
  RateLimitExceededException,
  RateLimiter,
  SkipRateLimit,
  type RateLimitDecision,
} from 'nestjs-holdup';

/** The same limit, enforced by the guard and from application code. */
export const SEARCH = { name: 'search', rate: 1, burst: 2 };

@Controller('e')
export class ErrorsController {
  constructor(private readonly limiter: RateLimiter) {}

  @Get('guarded')
  @RateLimit({ ...SEARCH, key: 'header:x-caller' })
  guarded(): string {
    return 'ok';
  }

  /** The guard's bucket of the same caller is another one (route-scoped): this one is the service's. */
  @Get('enforced')
  @SkipRateLimit()
  async enforced(@Headers('x-caller') caller: string): Promise<RateLimitDecision> {
    return this.limiter.enforce(caller, SEARCH);
  }

  @Get('costly')
  @SkipRateLimit()
  async costly(@Headers('x-caller') caller: string): Promise<RateLimitDecision> {
    return this.limiter.enforce(caller, SEARCH, { cost: 5 });
  }

  /** Thrown by hand, knowing nothing but the wait. */
  @Get('thrown')
  @SkipRateLimit()
  thrown(): never {
    throw new RateLimitExceededException(7);
  }
}
