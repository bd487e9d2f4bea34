import { Controller, Get, type Type } from '@nestjs/common';
import { RateLimit, type RateLimitOptions } from 'nestjs-holdup';

/**
 * A controller class named `name` with one route handler `handler()` (GET /<name>/h),
 * carrying `limits` on the method or on the class. Several `limits` entries on the
 * method are applied as separate (stacked) @RateLimit() decorators when `stacked`.
 */
export function controllerWith(
  name: string,
  limits: unknown,
  { on = 'method', stacked = false }: { on?: 'method' | 'class'; stacked?: boolean } = {},
): Type {
  const Ctl = {
    [name]: class {
      handler() {
        return { ok: true };
      }
    },
  }[name]!;
  const descriptor = Object.getOwnPropertyDescriptor(Ctl.prototype, 'handler')!;
  Get('h')(Ctl.prototype, 'handler', descriptor);
  const decorators = stacked
    ? (limits as unknown[]).map((limit) => RateLimit(limit as RateLimitOptions))
    : [RateLimit(limits as RateLimitOptions)];
  for (const decorator of decorators) {
    if (on === 'method') decorator(Ctl.prototype, 'handler', descriptor);
    else decorator(Ctl);
  }
  Controller(name)(Ctl);
  return Ctl;
}

@Controller('valid')
export class ValidController {
  @RateLimit([
    { rate: '100/15min', burst: 10 },
    { name: 'b.c:d-e_f', rate: 0.5, cost: 1 },
    {
      name: 'fn',
      rate: '2/s',
      burst: 2,
      cost: () => 1,
      key: 'header:x-api-key',
      scope: 'shared',
      failMode: 'closed',
    },
  ])
  @Get()
  index() {
    return { ok: true };
  }
}

/** A limit with a misspelt option (`brust`), as a decorator would carry it from untyped code. */
@Controller('orders')
export class OrdersController {
  @RateLimit({ rate: '2/min', brust: 20 } as RateLimitOptions)
  @Get()
  search() {
    return { ok: true };
  }
}
