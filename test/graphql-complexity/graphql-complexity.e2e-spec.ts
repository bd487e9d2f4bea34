/**
 * GraphQL complexity budgets (`nestjs-holdup/graphql`, issue 30), on Apollo
 * (Express) and Mercurius (Fastify): an operation is charged its complexity
 * once, at its root field, not per nested field; what its lists did not
 * resolve is given back after the resolver; the headers and the denial's
 * extensions carry the budget left.
 */
import request from 'supertest';
import type { DynamicModule, INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { ManualClock, RateLimitModule } from 'nestjs-holdup';
import { BudgetResolver, BUDGET_TYPE_DEFS } from './budget.resolver.js';

interface Driver {
  readonly name: string;
  graphql(): DynamicModule;
  adapter(): AbstractHttpAdapter;
}

const DRIVERS: readonly Driver[] = [
  {
    name: 'Apollo on Express',
    graphql: () =>
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        typeDefs: BUDGET_TYPE_DEFS,
        includeStacktraceInErrorResponses: false,
      }),
    adapter: () => new ExpressAdapter(),
  },
  {
    name: 'Mercurius on Fastify',
    graphql: () =>
      GraphQLModule.forRoot<MercuriusDriverConfig>({
        driver: MercuriusDriver,
        typeDefs: BUDGET_TYPE_DEFS,
      }),
    adapter: () => new FastifyAdapter(),
  },
];

interface Answer {
  readonly headers: Record<string, string | undefined>;
  readonly data: { items: { id: number; price: number }[] } | null;
  readonly errors?: { extensions?: Record<string, unknown> }[];
}

describe.each(DRIVERS)('GraphQL complexity budget, $name', (driver) => {
  let app: INestApplication;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({ clock: new ManualClock(1_700_000_000_000) }),
        driver.graphql(),
      ],
      providers: [BudgetResolver],
    }).compile();
    app = moduleRef.createNestApplication(driver.adapter(), { logger: false });
    await app.init();
    if (driver.name.startsWith('Mercurius')) await app.getHttpAdapter().getInstance().ready();
  });
  afterEach(() => app.close());

  const query = async (text: string, variables: Record<string, unknown> = {}): Promise<Answer> => {
    const res = await request(app.getHttpServer())
      .post('/graphql')
      .send({ query: text, variables });
    return { headers: res.headers, ...(res.body as Omit<Answer, 'headers'>) };
  };
  /** 1 + 13 x 3 = 40 when all 13 items resolve. */
  const ITEMS = '{ items(first: 13) { id name price } }';

  it('an operation of complexity 40 against a budget of 100: admitted twice, refused the third time', async () => {
    const first = await query(ITEMS);
    expect(first.errors).toBeUndefined();
    expect(first.data!.items).toHaveLength(13);
    expect(first.headers['ratelimit']).toMatch(/^"complexity";r=60;/);
    expect((await query(ITEMS)).headers['ratelimit']).toMatch(/^"complexity";r=20;/);
    const third = await query(ITEMS);
    expect(third.data).toBeNull();
    expect(third.errors![0]!.extensions).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      retryAfter: 720, // 20 points more, at 100 an hour
      limits: [{ name: 'complexity', remaining: 20 }],
    });
  });

  it('gives back what was not resolved: a list shorter than its estimate, fields left out by @include', async () => {
    // Estimated 40; 3 items resolved: 1 + 3 x 3 = 10, so 30 come back.
    const short = await query('{ items(first: 13, available: 3) { id name price } }');
    expect(short.data!.items).toHaveLength(3);
    expect(short.headers['ratelimit']).toMatch(/^"complexity";r=60;/); // written at admission: 40 reserved
    const after = await query(ITEMS);
    expect(after.headers['ratelimit']).toMatch(/^"complexity";r=50;/); // 100 - 10 - 40
    // @include(if: false) is left out of the estimate itself: 1 + 13 x 2 = 27.
    const lean = await query(
      'query ($withPrice: Boolean!) { items(first: 13) { id name price @include(if: $withPrice) } }',
      { withPrice: false },
    );
    expect(lean.data!.items[0]).toEqual({ id: 0, name: 'item 0' });
    expect(lean.headers['ratelimit']).toMatch(/^"complexity";r=23;/);
  });

  it('a root field reached through a fragment spread is charged its whole complexity', async () => {
    const spread = await query(
      'query { ...Everything } fragment Everything on Query { items(first: 13) { id name price } }',
    );
    expect(spread.errors).toBeUndefined();
    expect(spread.headers['ratelimit']).toMatch(/^"complexity";r=60;/);
  });
});
