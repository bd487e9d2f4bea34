import { Controller, Get, MessageEvent, Post, Query, Sse } from '@nestjs/common';
import { interval, map, take, type Observable } from 'rxjs';
import { RateLimit } from 'nestjs-holdup';

/**
 * Holds admitted requests inside the handler until the test opens it, so
 * that every request of a burst is decided before any of them settles.
 */
export class SettleGate {
  entered = 0;
  private opened = true;
  private waiting: (() => void)[] = [];

  close(): void {
    this.opened = false;
    this.entered = 0;
  }

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

export const settleGate = new SettleGate();

/** The actual costs of the calls admitted (what `settle` answered), for the bound. */
export const spent: number[] = [];

/** Answers the asynchronous `settle` gave. */
export const asyncSettles = { count: 0 };

/**
 * A budget of 1,000 tokens refilling at 100 a second, shared by every caller
 * (`key: 'global'`); every call reserves an estimate of 100 and settles at
 * what it reports it spent.
 */
const BUDGET = { rate: 100, burst: 1000, key: 'global', cost: 100 } as const;

@Controller('settle')
export class SettleController {
  /** An LLM-like call: spends `spend` tokens, known once it is done. */
  @RateLimit({
    name: 'tokens',
    ...BUDGET,
    settle: ({ result }) => {
      const { usage } = result as { usage: number };
      spent.push(usage);
      return usage;
    },
  })
  @Post('complete')
  async complete(@Query('spend') spend: string) {
    await settleGate.pass();
    return { usage: Number(spend) };
  }

  /** The same with an asynchronous `settle` (an answer looked up after the handler). */
  @RateLimit({
    name: 'async',
    ...BUDGET,
    settle: async ({ result }) => {
      await new Promise((resolve) => setImmediate(resolve));
      asyncSettles.count++;
      return (result as { usage: number }).usage;
    },
  })
  @Post('async')
  completeAsync(@Query('spend') spend: string) {
    return { usage: Number(spend) };
  }

  /** A `settle` that answers nonsense: every call stays charged at its estimate. */
  @RateLimit({ name: 'broken', ...BUDGET, settle: () => Number.NaN })
  @Post('broken')
  broken() {
    return { ok: true };
  }

  /** A streamed answer: each event carries the running total; the last one is settled. */
  @Sse('stream')
  @RateLimit({
    name: 'stream',
    ...BUDGET,
    settle: ({ result }) => (result as MessageEvent & { data: { total: number } }).data.total,
  })
  stream(@Query('chunks') chunks: string): Observable<MessageEvent> {
    return interval(1).pipe(
      take(Number(chunks)),
      map((i) => ({ data: { total: 400 * (i + 1) } })),
    );
  }

  @Get('ping')
  ping() {
    return { ok: true };
  }
}
