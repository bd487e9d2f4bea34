import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/** Routes whose buckets make every header field take a telling value. */
@Controller('modes')
export class HeaderModesController {
  /** 1 token/s, burst 3: the draft's own example scale. */
  @RateLimit({ rate: 1, burst: 3 })
  @Get('one')
  one() {
    return { ok: true };
  }

  /** One token every 10 s, burst 2: `t` counts down while a token is still left. */
  @RateLimit({ name: 'slow', rate: '6/min', burst: 2 })
  @Get('slow')
  slow() {
    return { ok: true };
  }

  /** Two requests' worth per call. */
  @RateLimit({ name: 'heavy', rate: 1, burst: 5, cost: 2 })
  @Get('heavy')
  heavy() {
    return { ok: true };
  }

  /** Two limits: the single-limit formats report the most restrictive. */
  @RateLimit([
    { name: 'minute', rate: '10/min', burst: 5 },
    { name: 'second', rate: 2, burst: 4 },
  ])
  @Get('two')
  two() {
    return { ok: true };
  }
}
