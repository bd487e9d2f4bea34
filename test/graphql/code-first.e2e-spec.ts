/**
 * Code-first GraphQL (`autoSchemaFile: true`) on Apollo and Mercurius:
 * resolvers declared with `@Query(() => T)` and no name are found at
 * start-up, so a bad limit fails the bootstrap instead of the first query;
 * a limited `@ResolveField()` runs only where Nest runs the guard on field
 * resolvers (`fieldResolverEnhancers`), and the module refuses to start
 * where it would not.
 */
import request from 'supertest';
import type { INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { GRAPHQL_DRIVERS, type FieldResolverEnhancer } from './graphql-drivers.js';
import {
  BadCodeFirstResolver,
  ConcurrentFieldResolver,
  GadgetResolver,
} from './gadget.resolver.js';

describe.each(GRAPHQL_DRIVERS)('GraphQL code-first, $name', (driver) => {
  let app: INestApplication | undefined;

  const boot = async (resolvers: Type[], fieldResolverEnhancers: FieldResolverEnhancer[] = []) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000) }),
        driver.graphql({ autoSchemaFile: true }, fieldResolverEnhancers),
      ],
      providers: resolvers,
    }).compile();
    app = moduleRef.createNestApplication(driver.adapter(), { logger: false });
    await app.init();
    if (driver.name === 'Mercurius on Fastify') await app.getHttpAdapter().getInstance().ready();
  };
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const query = async (text: string) => {
    const res = await request(app!.getHttpServer()).post('/graphql').send({ query: text });
    return res.body as {
      data: Record<string, unknown> | null;
      errors?: { path?: unknown[]; extensions?: { code?: string } }[];
    };
  };

  it('a bad limit on an unnamed @Query(() => T) fails the bootstrap, naming the handler', async () => {
    await expect(boot([BadCodeFirstResolver])).rejects.toThrow(
      'RateLimit: BadCodeFirstResolver.broken, limit "default": rate must be',
    );
  });

  it('a limited unnamed @ResolveField() without fieldResolverEnhancers guards fails the bootstrap, naming the field and the setting', async () => {
    await expect(boot([GadgetResolver])).rejects.toThrow(
      "RateLimit: GadgetResolver.cost: GraphQL field resolver(s) with limits, which Nest calls without guards unless GraphQLModule.forRoot({ fieldResolverEnhancers: ['guards'] })",
    );
  });

  it('a concurrency limit on a field resolver needs the interceptors as well', async () => {
    await expect(boot([ConcurrentFieldResolver], ['guards'])).rejects.toThrow(
      "RateLimit: ConcurrentFieldResolver.weight: GraphQL field resolver(s) with limits, which Nest calls without interceptors unless GraphQLModule.forRoot({ fieldResolverEnhancers: ['interceptors'] })",
    );
  });

  it("with fieldResolverEnhancers: ['guards'], the unnamed query and each call of the field are charged", async () => {
    await boot([GadgetResolver], ['guards']);
    const first = await query('{ gadgets { id cost } }');
    expect(first.data).toEqual({
      gadgets: [
        { id: 1, cost: 100 },
        { id: 2, cost: 200 },
        { id: 3, cost: null },
      ],
    });
    // Mercurius spells the list index as a string.
    expect(first.errors?.map((error) => [error.path?.map(String), error.extensions?.code])).toEqual(
      [[['gadgets', '2', 'cost'], 'TOO_MANY_REQUESTS']],
    );
    const second = await query('{ gadgets { id } }');
    expect(second.data).toBeNull();
    expect(second.errors?.map((error) => error.extensions?.code)).toEqual(['TOO_MANY_REQUESTS']);
  });
});
