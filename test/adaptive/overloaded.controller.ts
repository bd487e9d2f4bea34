import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ManualClock, RateLimit } from 'nestjs-holdup';

/** The module clock of the scenario: the test moves it between requests. */
export const overloadClock = new ManualClock(5_000_000);

/** A downstream that serves at most this many calls per second and fails the rest. */
export const DOWNSTREAM_CAPACITY = 30;

/** Declared rate: more than three times what the downstream can take. */
export const DECLARED_RATE = 100;
export const DECLARED_BURST = 10;

/** Times (module clock) of the calls the downstream served in the last second. */
const served: number[] = [];

export function resetDownstream(): void {
  served.length = 0;
}

@Controller('overloaded')
export class OverloadedController {
  @RateLimit({
    name: 'downstream',
    rate: DECLARED_RATE,
    burst: DECLARED_BURST,
    key: 'global',
    adaptive: { min: 5, max: DECLARED_RATE, jitter: 0 },
  })
  @Get()
  call(): string {
    const now = overloadClock.now();
    while (served.length > 0 && served[0]! <= now - 1000) served.shift();
    if (served.length >= DOWNSTREAM_CAPACITY)
      throw new ServiceUnavailableException('downstream overloaded');
    served.push(now);
    return 'ok';
  }
}
