// A TypeScript consumer of every entry point: cjs-consumer.e2e-spec.ts copies
// it into a CommonJS Nest 11 project that installed the packed tarball and
// type-checks it there (module commonjs, strict, decorators, no
// moduleResolution). Type-checked only, never run.
import { Controller, Get, Module } from '@nestjs/common';
import {
  MemoryStore,
  RateLimit,
  RateLimitModule,
  RateLimiter,
  SkipRateLimit,
  parseRate,
  type RateLimitStore,
  type RateLimitTypes,
} from 'nestjs-holdup';
import { aimdNext } from 'nestjs-holdup/adaptive';
import { gcraPeek } from 'nestjs-holdup/algorithms';
import type { DecisionEvent } from 'nestjs-holdup/observability';
import { capacityOf, describeStoreContract, type ConsumeRequest } from 'nestjs-holdup/store';
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
    const decision = await this.limiter.consume('alice', {
      name: 'login',
      rate: '5/min',
      burst: 5,
    });
    return decision.allowed;
  }

  @SkipRateLimit()
  @Get('health')
  health(): void {}
}

const twoTier: TwoTierStoreOptions = { client, instances: 4 };
export const stores: RateLimitStore[] = [
  new MemoryStore({ maxKeys: 1_000 }),
  new RedisStore({ client, timeoutMs: 50 }),
  new TwoTierStore(twoTier),
];

@Module({
  imports: [
    RateLimitModule.forRoot({
      store: new TwoTierStore(twoTier),
      failMode: 'local',
      defaults: { rate: '100/min', burst: 20 },
    }),
  ],
  controllers: [OrdersController],
})
export class AppModule {}

export const perSecond: number | undefined = parseRate('100/min');
export const remaining: number = gcraPeek(undefined, 0, { rate: 1, burst: 5 }).remaining;
export const capacities = (request: ConsumeRequest): number[] =>
  request.checks.map((check) => capacityOf(check.limit));
export const results = (events: readonly DecisionEvent[]): string[] =>
  events.map((event) => event.result);
export const step: typeof aimdNext = aimdNext;
// The contract suite's declarations need no test framework's types (this project has none).
export const contract: typeof describeStoreContract = describeStoreContract;

// The root's type-only namespace of secondary types.
export const headers: RateLimitTypes.HeadersMode = 'both';
export const onDenied = (event: RateLimitTypes.RateLimitDeniedEvent): string => event.route;

// The types are the package's, not `any`: these must be errors.
// @ts-expect-error no such headers mode
export const badHeaders: RateLimitTypes.HeadersMode = 'sometimes';
// @ts-expect-error timeoutMs is a number
new RedisStore({ client, timeoutMs: 'fast' });
// @ts-expect-error no such fail mode
RateLimitModule.forRoot({ failMode: 'sometimes' });
