import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/** Same class name as ./same-name-a.controller.ts: another route. */
@Controller('v2/users')
export class UsersController {
  @RateLimit({ rate: '1/min', burst: 1 })
  @Get()
  list() {
    return { version: 2 };
  }
}
