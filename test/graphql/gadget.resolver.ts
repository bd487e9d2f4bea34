/**
 * Code-first resolvers in the README's style: `@Query(() => T)` and
 * `@ResolveField(() => T)` with no name, so the resolver's name is the
 * method's (Nest leaves the name metadata undefined).
 */
import { Field, Int, ObjectType, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { RateLimit } from 'nestjs-holdup';

@ObjectType()
export class Gadget {
  @Field(() => Int)
  id!: number;
}

@Resolver(() => Gadget)
export class GadgetResolver {
  @RateLimit({ name: 'gadgets', rate: '1/min', burst: 1 })
  @Query(() => [Gadget])
  gadgets(): Gadget[] {
    return [{ id: 1 }, { id: 2 }, { id: 3 }];
  }

  @RateLimit({ name: 'gadget-cost', rate: '2/min', burst: 2 })
  @ResolveField(() => Int, { nullable: true })
  cost(@Parent() gadget: Gadget): number {
    return gadget.id * 100;
  }
}

@Resolver()
export class BadCodeFirstResolver {
  @RateLimit({ rate: 'ten per minute' })
  @Query(() => String)
  broken(): string {
    return 'never';
  }
}

@Resolver(() => Gadget)
export class ConcurrentFieldResolver {
  @Query(() => [Gadget])
  someGadgets(): Gadget[] {
    return [{ id: 1 }];
  }

  /** Slots are taken by the interceptor, which Nest runs on field resolvers only with `fieldResolverEnhancers: ['interceptors']`. */
  @RateLimit({ name: 'gadget-slots', concurrency: 2 })
  @ResolveField(() => Int, { nullable: true })
  weight(@Parent() gadget: Gadget): number {
    return gadget.id;
  }
}
