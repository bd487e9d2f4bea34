import {
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  Post,
  Query,
  UnauthorizedException,
} from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

/**
 * Holds every request inside the handler until the test opens the gate, so
 * that concurrent requests are all past the guard before any of them has an
 * outcome: the race a "peek, then charge on failure" limiter loses.
 */
export class Gate {
  entered = 0;
  private opened = false;
  private waiting: (() => void)[] = [];

  async pass(): Promise<void> {
    this.entered++;
    if (this.opened) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  open(): void {
    this.opened = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

export const gate = new Gate();

@Controller('charge')
export class ChargeController {
  /** "5 failed attempts per 15 min per client; successes don't count." */
  @RateLimit({ name: 'login', rate: '5/15min', burst: 5, charge: 'failures' })
  @Post('login')
  async login(@Query('password') password: string) {
    await gate.pass();
    if (password !== 'right') throw new UnauthorizedException('wrong password');
    return { ok: true };
  }

  /** Counts only what succeeded: a failed export costs nothing. */
  @RateLimit({ name: 'exports', rate: '3/hour', burst: 3, charge: 'successes' })
  @Get('export')
  export(@Query('fail') fail?: string) {
    if (fail) throw new ForbiddenException('not today');
    return { ok: true };
  }

  /** A predicate decides: only 409s count. */
  @RateLimit({
    name: 'conflicts',
    rate: '2/hour',
    burst: 2,
    charge: 'failures',
    isChargeFailure: ({ error }) => error instanceof HttpException && error.getStatus() === 409,
  })
  @Get('conflict')
  conflict(@Query('status') status?: string) {
    if (status) throw new HttpException('status', Number(status));
    return { ok: true };
  }

  /** An `isChargeFailure` that throws: the request stays charged. */
  @RateLimit({
    name: 'broken',
    rate: '2/hour',
    burst: 2,
    charge: 'failures',
    isChargeFailure: () => {
      throw new Error('predicate bug');
    },
  })
  @Get('broken')
  broken() {
    return { ok: true };
  }
}
