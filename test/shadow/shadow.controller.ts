import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

@Controller('shadow')
export class ShadowController {
  /** A new limit being rolled out: decided and counted, never denying. */
  @RateLimit({ name: 'candidate', rate: '1/min', burst: 2, shadow: true })
  @Get('only')
  only() {
    return { ok: true };
  }

  /** An enforced limit beside a shadow one. */
  @RateLimit([
    { name: 'current', rate: '1/min', burst: 3 },
    { name: 'stricter', rate: '1/min', burst: 1, shadow: true },
  ])
  @Get('beside')
  beside() {
    return { ok: true };
  }

  /** Enforced even when the module puts every limit in shadow mode. */
  @RateLimit({ name: 'enforced', rate: '1/min', burst: 1, shadow: false })
  @Get('enforced')
  enforced() {
    return { ok: true };
  }
}
