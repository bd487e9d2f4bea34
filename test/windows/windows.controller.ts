import { Controller, Get } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

@Controller('windows')
export class WindowsController {
  @RateLimit({ name: 'fixed', rate: '5/min', algorithm: 'fixed-window' })
  @Get('fixed')
  fixed() {
    return { ok: true };
  }

  @RateLimit({ name: 'sliding', rate: '4/min', algorithm: 'sliding-window' })
  @Get('sliding')
  sliding() {
    return { ok: true };
  }

  /** A daily quota that starts over at midnight in Paris. */
  @RateLimit({
    name: 'daily',
    rate: '3/day',
    algorithm: 'fixed-window',
    calendar: { timeZone: 'Europe/Paris' },
  })
  @Get('daily')
  daily() {
    return { ok: true };
  }

  /** The README's example ("A daily quota", docs/algorithms.md). */
  @RateLimit([
    { name: 'burst', rate: '10/s', burst: 20 },
    {
      name: 'daily',
      rate: '1000/day',
      algorithm: 'fixed-window',
      calendar: { timeZone: 'Europe/Paris' },
    },
  ])
  @Get('reports')
  reports() {
    return { ok: true };
  }

  /** A token bucket against bursts and a daily quota: both must admit, neither is charged otherwise. */
  @RateLimit([
    { name: 'burst', rate: '1/s', burst: 3 },
    { name: 'daily', rate: '4/day', algorithm: 'fixed-window', calendar: {} },
  ])
  @Get('mixed')
  mixed() {
    return { ok: true };
  }
}
