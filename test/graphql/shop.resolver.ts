import { Args, Query, Resolver } from '@nestjs/graphql';
import { RateLimit, RateLimiter } from 'nestjs-holdup';

export const TYPE_DEFS = /* GraphQL */ `
  type Query {
    price(item: String!): Int
    free: String!
    keyed: String
    export: Boolean
  }
`;

@Resolver()
export class ShopResolver {
  constructor(private readonly limiter: RateLimiter) {}

  /** Burst 2 per client address, then one every 30 s. Nullable: a refusal nulls this field only. */
  @RateLimit({ name: 'price', rate: '2/min', burst: 2 })
  @Query('price')
  price(@Args('item') item: string) {
    return item.length * 10;
  }

  @Query('free')
  free() {
    return 'free';
  }

  @RateLimit({ name: 'keyed', rate: '1/min', burst: 1, key: 'header:x-api-key' })
  @Query('keyed')
  keyed() {
    return 'ok';
  }

  /** Not limited by a decorator: the service decides, with enforce(). */
  @Query('export')
  async export() {
    await this.limiter.enforce('exports', { name: 'exports', rate: '1/hour', burst: 1 });
    return true;
  }
}

@Resolver()
export class BadResolver {
  @RateLimit({ rate: 'ten per minute' })
  @Query('free')
  free() {
    return 'never';
  }
}
