import { BadRequestException, Controller, Get, UseInterceptors } from '@nestjs/common';
import { RateLimit, RateLimitInterceptor } from 'nestjs-holdup';

const ONE = { rate: 1, burst: 3 } as const;
const TWO = [
  { name: 'minute', rate: '10/min', burst: 5 },
  { name: 'second', rate: 2, burst: 4 },
] as const;

@Controller('h')
export class HeadersController {
  @RateLimit(ONE)
  @Get('one')
  one() {
    return { ok: true };
  }

  @RateLimit(TWO)
  @Get('two')
  two() {
    return { ok: true };
  }

  @RateLimit(ONE)
  @Get('throws')
  throws() {
    throw new BadRequestException('nope');
  }

  @UseInterceptors(RateLimitInterceptor)
  @RateLimit(ONE)
  @Get('intercepted')
  intercepted() {
    return { ok: true };
  }

  @UseInterceptors(RateLimitInterceptor)
  @RateLimit(TWO)
  @Get('intercepted-two')
  interceptedTwo() {
    return { ok: true };
  }

  @UseInterceptors(RateLimitInterceptor)
  @RateLimit(ONE)
  @Get('intercepted-throws')
  interceptedThrows() {
    throw new BadRequestException('nope');
  }
}

/** The interceptor bound on the class. */
@UseInterceptors(RateLimitInterceptor)
@RateLimit(ONE)
@Controller('hi')
export class InterceptedController {
  @Get()
  index() {
    return { ok: true };
  }
}
