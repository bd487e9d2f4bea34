import { BadRequestException, Controller, Get, InternalServerErrorException } from '@nestjs/common';
import { ManualClock, RateLimit } from 'nestjs-holdup';

/** The module clock of the scenario: handlers move it to look slow. */
export const clock = new ManualClock(1_000_000);

/** What the next call to `/flaky` does. */
export const behaviour: { mode: 'ok' | 'fail' | 'client-error' | 'throw' } = { mode: 'ok' };

const adaptive = { min: 10, max: 100, jitter: 0, minOutcomes: 5 };

@Controller('flaky')
export class FlakyController {
  @RateLimit({ name: 'flaky', rate: 100, burst: 10, key: 'global', adaptive })
  @Get()
  get(): string {
    if (behaviour.mode === 'fail') throw new InternalServerErrorException();
    if (behaviour.mode === 'client-error') throw new BadRequestException();
    if (behaviour.mode === 'throw') throw new Error('bug');
    return 'ok';
  }

  @RateLimit({
    name: 'slow',
    rate: 100,
    burst: 10,
    key: 'global',
    adaptive: { ...adaptive, latencyTargetMs: 50 },
  })
  @Get('slow')
  slow(): string {
    clock.advance(80); // takes 80 ms of module time, over the 50 ms target
    return 'ok';
  }
}
