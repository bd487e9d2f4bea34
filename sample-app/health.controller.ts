import { Controller, Get } from '@nestjs/common';
import { SkipRateLimit } from 'nestjs-holdup';

@SkipRateLimit()
@Controller('health')
export class HealthController {
  @Get()
  check() {
    return { status: 'ok' };
  }
}
