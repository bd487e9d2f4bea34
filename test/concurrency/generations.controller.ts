import {
  Controller,
  Get,
  Query,
  Sse,
  UseGuards,
  type CanActivate,
  type MessageEvent,
} from '@nestjs/common';
import { Observable } from 'rxjs';
import { RateLimit } from 'nestjs-holdup';

/** What the handlers record: how many run at once, and the most that ever did. */
export class InFlight {
  now = 0;
  max = 0;
  /** Resolved by the test: every handler waiting on it returns. */
  private open!: () => void;
  gate: Promise<void> = this.reset();

  enter(): void {
    this.now++;
    this.max = Math.max(this.max, this.now);
  }

  leave(): void {
    this.now--;
  }

  reset(): Promise<void> {
    this.gate = new Promise<void>((resolve) => (this.open = resolve));
    return this.gate;
  }

  release(): void {
    this.open();
  }
}

export const inFlight = new InFlight();

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

class RefuseAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

/** An LLM gateway's generation endpoint: at most 4 in flight per API key. */
@Controller()
export class GenerationsController {
  @Get('generate')
  @RateLimit({ name: 'generations', concurrency: 4, key: 'header:x-api-key' })
  async generate(): Promise<{ ok: true }> {
    inFlight.enter();
    try {
      await inFlight.gate;
      return { ok: true };
    } finally {
      inFlight.leave();
    }
  }

  /** With a rate limit too: both in the headers; a refused slot refunds the token. */
  @Get('both')
  @RateLimit([
    { name: 'generations', concurrency: 2, key: 'header:x-api-key' },
    { name: 'per-minute', rate: '100/min', burst: 5, key: 'header:x-api-key' },
  ])
  async both(): Promise<{ ok: true }> {
    inFlight.enter();
    try {
      await inFlight.gate;
      return { ok: true };
    } finally {
      inFlight.leave();
    }
  }

  /** The no-leak mix: `mode` = ok, throw, slow (a client that aborts it), or hold (until the test lets go). */
  @Get('mixed')
  @RateLimit({ name: 'mixed', concurrency: 8, key: 'header:x-api-key' })
  async mixed(@Query('mode') mode: string): Promise<{ ok: true }> {
    if (mode === 'hold') await inFlight.gate;
    else if (mode === 'slow') await delay(30);
    else await delay(1);
    if (mode === 'throw') throw new Error('generation failed');
    return { ok: true };
  }

  /** A short lease: slots a dead instance held come back after a second. */
  @Get('leased')
  @RateLimit({ name: 'leased', concurrency: 2, key: 'header:x-api-key', leaseTimeout: '1s' })
  leased(): { ok: true } {
    return { ok: true };
  }

  /** A guard of the route's own refuses every call, after the rate-limit guard took the slot. */
  @Get('forbidden')
  @UseGuards(RefuseAll)
  @RateLimit({ name: 'forbidden', concurrency: 1, key: 'header:x-api-key' })
  forbidden(): { ok: true } {
    return { ok: true };
  }

  /** A stream holds its slot until it completes. */
  @Sse('stream')
  @RateLimit({ name: 'streams', concurrency: 1, key: 'header:x-api-key' })
  stream(): Observable<MessageEvent> {
    return new Observable<MessageEvent>((subscriber) => {
      inFlight.enter();
      subscriber.next({ data: { step: 1 } });
      void inFlight.gate.then(() => {
        subscriber.next({ data: { step: 2 } });
        subscriber.complete();
      });
      return () => inFlight.leave();
    });
  }
}
