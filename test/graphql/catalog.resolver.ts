import { Args, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { RateLimit } from 'nestjs-holdup';

/** A list whose items have a limited field: the shape of a field flood. */
export const CATALOG_TYPE_DEFS = /* GraphQL */ `
  type Item {
    id: Int!
    price: Int
  }
  type Query {
    items(count: Int!): [Item!]!
    cheap: Int
  }
`;

export interface Item {
  readonly id: number;
}

/** Counts the calls of the limited field that ran, whatever the answer said. */
export const fieldCalls = { price: 0 };

@Resolver('Item')
export class CatalogResolver {
  @Query('items')
  items(@Args('count', { type: () => Int }) count: number): Item[] {
    return Array.from({ length: count }, (_, id) => ({ id }));
  }

  /** 5 per minute per client: under a list of 100 items, 5 values and 95 refusals per request at most. */
  @RateLimit({ name: 'item-price', rate: '5/min', burst: 5 })
  @ResolveField('price')
  price(@Parent() item: Item): number {
    fieldCalls.price++;
    return item.id * 10;
  }

  /** Burst 1: every alias after the first is refused. */
  @RateLimit({ name: 'cheap', rate: '1/min', burst: 1 })
  @Query('cheap')
  cheap(): number {
    return 1;
  }
}
