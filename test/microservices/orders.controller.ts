import { Controller, Get } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { RateLimit, RateLimiter } from 'nestjs-holdup';

/** What the event handler saw, for the tests. */
export const received: unknown[] = [];

@Controller('orders')
export class OrdersController {
  constructor(private readonly limiter: RateLimiter) {}

  /** Not limited by a decorator: the service decides, with enforce(). */
  @MessagePattern('export')
  async export() {
    await this.limiter.enforce('exports', { name: 'exports', rate: '1/hour', burst: 1 });
    return 'exported';
  }

  /** Per TCP peer (the default key): burst 2, then one every 30 s. */
  @RateLimit({ name: 'quote', rate: '2/min', burst: 2 })
  @MessagePattern('quote')
  quote(@Payload() item: string) {
    return { item, price: 42 };
  }

  /** Events: nobody waits for an answer; a refused one is counted and logged. */
  @RateLimit({ name: 'audit', rate: '1/min', burst: 1, key: 'global' })
  @EventPattern('audit')
  audit(@Payload() entry: unknown) {
    received.push(entry);
  }

  /** Only failed redemptions count (charge by outcome over TCP). */
  @RateLimit({ name: 'redeem', rate: '1/min', burst: 1, charge: 'failures' })
  @MessagePattern('redeem')
  redeem(@Payload() code: string) {
    if (code !== 'valid') throw new RpcException('invalid code');
    return 'redeemed';
  }

  /** An HTTP route of the same hybrid application. */
  @RateLimit({ name: 'page', rate: '1/min', burst: 1 })
  @Get()
  page() {
    return { ok: true };
  }
}

/** A transport without peer addresses needs a key function. */
@Controller()
export class KeyedController {
  @RateLimit({
    name: 'keyed',
    rate: '1/min',
    burst: 1,
    key: (ctx) => String(ctx.switchToRpc().getData<{ tenant: string }>().tenant),
  })
  @MessagePattern('keyed')
  keyed(@Payload() data: { tenant: string }) {
    return data.tenant;
  }

  @RateLimit({ name: 'unkeyed', rate: '1/min', burst: 1 })
  @MessagePattern('unkeyed')
  unkeyed() {
    return 'ok';
  }
}

/** A limit no one can mean: the application must not start. */
@Controller()
export class BadMessageController {
  @RateLimit({ rate: 'ten per minute' })
  @MessagePattern('bad')
  bad() {
    return 'never';
  }
}
