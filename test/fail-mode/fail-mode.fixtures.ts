import { Controller, Get } from '@nestjs/common';
import {
  MemoryStore,
  RateLimit,
  RateLimitStoreError,
  SkipRateLimit,
  type RateLimitStore,
} from 'nestjs-holdup';
import type {
  BucketsRequest,
  ConsumeRequest,
  ConsumeResult,
  RefundRequest,
} from 'nestjs-holdup/store';

export type StoreBehaviour = 'ok' | 'throw' | 'reject' | 'throw-wrapped';

/**
 * A store whose health is switched by the test: healthy (a MemoryStore), throwing
 * synchronously, or answering with a rejected promise. Every rejected promise it
 * hands out is tracked, to check that somebody handled it.
 */
export class FlakyStore implements RateLimitStore {
  behaviour: StoreBehaviour = 'ok';
  consumeCalls = 0;
  readonly rejections: { handled: boolean }[] = [];
  private readonly healthy = new MemoryStore();

  consume(request: ConsumeRequest): ConsumeResult | Promise<ConsumeResult> {
    this.consumeCalls++;
    switch (this.behaviour) {
      case 'throw':
        throw new Error('store exploded');
      case 'throw-wrapped':
        throw new RateLimitStoreError('Redis timed out', {
          cause: new Error('ETIMEDOUT 10.0.0.7:6379'),
        });
      case 'reject':
        return this.rejected(new Error('store unreachable'));
      default:
        return this.healthy.consume(request);
    }
  }

  peek(request: BucketsRequest): ConsumeResult {
    return this.healthy.peek(request);
  }

  refund(request: RefundRequest): ConsumeResult {
    return this.healthy.refund(request);
  }

  reset(request: BucketsRequest): void {
    this.healthy.reset(request);
  }

  close(): void {
    this.healthy.close();
  }

  private rejected(error: Error): Promise<never> {
    const promise = Promise.reject(error);
    const record = { handled: false };
    this.rejections.push(record);
    const then = promise.then.bind(promise);
    promise.then = ((onFulfilled?: unknown, onRejected?: unknown) => {
      if (typeof onRejected === 'function') record.handled = true;
      return then(onFulfilled as never, onRejected as never);
    }) as typeof promise.then;
    return promise;
  }
}

const LIMIT = { rate: 1, burst: 5 } as const;

@Controller('fm')
export class FailModeController {
  /** Follows the module's failMode. */
  @RateLimit(LIMIT)
  @Get('module')
  module() {
    return { ok: true };
  }

  @RateLimit({ ...LIMIT, failMode: 'closed' })
  @Get('closed')
  closed() {
    return { ok: true };
  }

  @RateLimit({ ...LIMIT, failMode: 'open' })
  @Get('open')
  open() {
    return { ok: true };
  }

  /** One limit open, one closed: the strictest wins. */
  @RateLimit([
    { name: 'lenient', ...LIMIT, failMode: 'open' },
    { name: 'strict', ...LIMIT, failMode: 'closed' },
  ])
  @Get('mixed')
  mixed() {
    return { ok: true };
  }

  /** One limit open, one following the module. */
  @RateLimit([
    { name: 'lenient', ...LIMIT, failMode: 'open' },
    { name: 'inherits', ...LIMIT },
  ])
  @Get('open-and-module')
  openAndModule() {
    return { ok: true };
  }

  /** The closed limit skipped by internal calls: those fail open, with the lenient limit alone. */
  @RateLimit([
    { name: 'lenient', ...LIMIT, failMode: 'open' },
    {
      name: 'strict',
      ...LIMIT,
      failMode: 'closed',
      skip: (ctx) => ctx.switchToHttp().getRequest().headers['x-internal'] === 'yes',
    },
  ])
  @Get('mixed-skippable')
  mixedSkippable() {
    return { ok: true };
  }

  @SkipRateLimit()
  @Get('skipped')
  skipped() {
    return { ok: true };
  }
}
