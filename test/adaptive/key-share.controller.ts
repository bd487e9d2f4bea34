import { Controller, Get, InternalServerErrorException, Query } from '@nestjs/common';
import { ManualClock, RateLimit } from 'nestjs-holdup';

/** The module clock of the scenario: the test moves it between requests. */
export const keyShareClock = new ManualClock(7_000_000);

export const SHARED_RATE = 50;

/**
 * One adaptive limit keyed by client address, shared by every caller of the
 * route. `?fail=1` makes the handler fail (500), as a client can when its own
 * input triggers an error.
 */
@Controller('shared')
export class KeyShareController {
  @RateLimit({
    name: 'shared',
    rate: SHARED_RATE,
    burst: 10,
    key: 'ip',
    adaptive: { min: 5, jitter: 0 },
  })
  @Get()
  call(@Query('fail') fail?: string): string {
    if (fail === '1') throw new InternalServerErrorException('failed');
    return 'ok';
  }
}
