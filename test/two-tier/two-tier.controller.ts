import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

@Controller('tt')
export class TwoTierController {
  /** Too small a burst to lease: every decision is one Redis call. */
  @RateLimit({ rate: '1/s', burst: 3 })
  @Get('small')
  small() {
    return { ok: true };
  }

  /** A burst worth leasing: most decisions are answered by the local tier. */
  @RateLimit({ name: 'wide', rate: 10, burst: 40 })
  @Get('wide')
  wide() {
    return { ok: true };
  }
}
