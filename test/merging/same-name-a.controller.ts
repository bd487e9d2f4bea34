import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/** Same class name as ./same-name-b.controller.ts (think v1/ and v2/ folders): another route. */
@Controller('v1/users')
export class UsersController {
  @RateLimit({ rate: '1/min', burst: 1 })
  @Get()
  list() {
    return { version: 1 };
  }
}
