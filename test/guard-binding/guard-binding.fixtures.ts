import { Controller, Get, UseGuards } from '@nestjs/common';
import { RateLimit, RateLimitGuard } from 'nestjs-holdup';

const LIMIT = { rate: '1/min', burst: 2 } as const;

/** Limited, with no guard of its own: limited only where a RateLimitGuard runs globally. */
@RateLimit(LIMIT)
@Controller('plain')
export class PlainController {
  @Get()
  index() {
    return { ok: true };
  }

  @Get('other')
  other() {
    return { ok: true };
  }
}

/** The guard bound on the class (the usual way with `bindGlobally: false`; bound twice when the module is global). */
@UseGuards(RateLimitGuard)
@RateLimit(LIMIT)
@Controller('bound')
export class BoundController {
  @Get()
  index() {
    return { ok: true };
  }
}

/** The guard bound on the class and again on the route. */
@UseGuards(RateLimitGuard)
@RateLimit(LIMIT)
@Controller('bound-twice')
export class BoundTwiceController {
  @UseGuards(RateLimitGuard)
  @Get()
  index() {
    return { ok: true };
  }
}

/** Not limited at all: nothing to warn about. */
@Controller('free')
export class FreeController {
  @Get()
  index() {
    return { ok: true };
  }
}
