import { Controller, Get, Post } from '@nestjs/common';
import { RateLimit, SkipRateLimit } from 'nestjs-holdup';

@RateLimit({ rate: '1/s', burst: 3 })
@Controller('basic')
export class BasicController {
  @Get()
  index() {
    return { ok: true };
  }

  @RateLimit({ name: 'search', rate: 2, burst: 4, cost: 2 })
  @Get('search')
  search() {
    return { ok: true };
  }

  @SkipRateLimit()
  @Get('health')
  health() {
    return { ok: true };
  }

  @Post('create')
  create() {
    return { ok: true };
  }
}
