import { Args, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import { RateLimit } from 'nestjs-holdup';
import { graphqlComplexity } from 'nestjs-holdup/graphql';

export const BUDGET_TYPE_DEFS = /* GraphQL */ `
  type Item {
    id: Int!
    name: String
    price: Int
  }
  type Query {
    items(first: Int!, available: Int): [Item!]!
  }
`;

/** A list costs its children once per item asked for (`first`), plus itself. */
const listEstimator: ComplexityEstimator = ({ field, args, childComplexity }) =>
  field.name === 'items' ? 1 + (args['first'] as number) * childComplexity : undefined;

interface Item {
  readonly id: number;
}

/** A budget of 100 complexity points per client an hour, charged per operation. */
@Resolver('Item')
export class BudgetResolver {
  @RateLimit({
    name: 'complexity',
    rate: '100/hour',
    burst: 100,
    key: 'global',
    ...graphqlComplexity({
      estimators: [listEstimator, simpleEstimator({ defaultComplexity: 1 })],
    }),
  })
  @Query('items')
  items(
    @Args('first', { type: () => Int }) first: number,
    @Args('available', { type: () => Int, nullable: true }) available?: number,
  ): Item[] {
    return Array.from({ length: Math.min(first, available ?? first) }, (_, id) => ({ id }));
  }

  @ResolveField('name')
  name(@Parent() item: Item): string {
    return `item ${item.id}`;
  }

  @ResolveField('price')
  price(@Parent() item: Item): number {
    return item.id * 10;
  }
}
