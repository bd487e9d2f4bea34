// A TypeScript consumer of every entry point: cjs-consumer.e2e-spec.ts copies
// it into a CommonJS Nest 11 project that installed the packed tarball and
// type-checks it there (module commonjs, strict, decorators, no
// moduleResolution). Type-checked only, never run.
import { Controller, Get, Module } from '@nestjs/common';
import { MemoryStore, RateLimit, RateLimitModule, RateLimiter, SkipRateLimit, type RateLimitStore } from 'nestjs-holdup';
import { parseRate } from 'nestjs-holdup/algorithms';
import { RedisStore, type RedisClient } from 'nestjs-holdup/redis';
import { TwoTierStore, type TwoTierStoreOptions } from 'nestjs-holdup/two-tier';

declare const client: RedisClient; // an ioredis Redis or Cluster in an application

@RateLimit({ rate: '10/s', burst: 20, key: 'user' })
@Controller('orders')
export class OrdersController {
  constructor(private readonly limiter: RateLimiter) {}

  @RateLimit({ name: 'search', rate: 5, burst: 10, cost: 2, key: 'header:x-api-key' })
  @Get()
  async search(): Promise<boolean> {
    const decision = await this.limiter.consume('alice', { name: 'login', rate: '5/min', burst: 5 });
    return decision.allowed;
  }

  @SkipRateLimit()
  @Get('health')
  health(): void {}
}

const twoTier: TwoTierStoreOptions = { client, instances: 4 };
export const stores: RateLimitStore[] = [new MemoryStore({ maxKeys: 1_000 }), new RedisStore({ client, timeoutMs: 50 }), new TwoTierStore(twoTier)];

@Module({
  imports: [RateLimitModule.forRoot({ store: new TwoTierStore(twoTier), failMode: 'local', defaults: { rate: '100/min', burst: 20 } })],
  controllers: [OrdersController],
})
export class AppModule {}

export const perSecond: number | undefined = parseRate('100/min');

// The types are the package's, not `any`: these must be errors.
// @ts-expect-error timeoutMs is a number
new RedisStore({ client, timeoutMs: 'fast' });
// @ts-expect-error no such fail mode
RateLimitModule.forRoot({ failMode: 'sometimes' });
