import { Controller, Get, Headers } from '@nestjs/common';
import { RateLimit, type RateLimitClock } from 'nestjs-holdup';

/** Which request reached a handler, and when (the test's clock). */
export interface Served {
  readonly n: number;
  readonly at: number;
}

export const served: Served[] = [];
export const clockRef: { clock?: RateLimitClock } = {};

/** One token, ten a second: a burst of requests is spaced 100 ms apart instead of refused. */
@Controller('smooth')
export class DelayController {
  @RateLimit({ name: 'smooth', rate: 10, burst: 1, key: 'global', maxDelay: 2_000 })
  @Get('2s')
  twoSeconds(@Headers('x-n') n: string) {
    served.push({ n: Number(n), at: clockRef.clock!.now() });
    return { n: Number(n) };
  }

  @RateLimit({ name: 'smooth', rate: 10, burst: 1, key: 'global', maxDelay: 1_000 })
  @Get('1s')
  oneSecond(@Headers('x-n') n: string) {
    served.push({ n: Number(n), at: clockRef.clock!.now() });
    return { n: Number(n) };
  }

  @RateLimit({ name: 'smooth', rate: 10, burst: 1, key: 'global', maxDelay: '300ms' })
  @Get('300ms')
  short(@Headers('x-n') n: string) {
    served.push({ n: Number(n), at: clockRef.clock!.now() });
    return { n: Number(n) };
  }

  /** One a second, waits up to five: for a client that goes away while waiting. */
  @RateLimit({ name: 'slow', rate: 1, burst: 1, key: 'global', maxDelay: '5s' })
  @Get('slow')
  slow(@Headers('x-n') n: string) {
    served.push({ n: Number(n), at: clockRef.clock!.now() });
    return { n: Number(n) };
  }
}
